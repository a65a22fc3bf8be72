"""The wheel a user installs: built from the project, installed with no extras in a clean
virtual environment, it imports, reads a sheet, answers `--help`, and names the extra that
`estatebot serve` needs. Its dependencies come from the package registry, as a user's would."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # A clean environment: nothing of this project's virtual environment on the way.
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env={**env, "ESTATEBOT_PROGRESS": "0"},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the project's own files."""
    out = tmp_path_factory.mktemp("wheel")
    done = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("estatebot-*.whl")
    return built


@pytest.fixture(scope="module")
def clean_env(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with the wheel installed, no extras: its bin folder."""
    root = tmp_path_factory.mktemp("venv")
    venv.create(root, with_pip=True)
    bin_dir = root / "bin"
    done = _run(bin_dir / "python", "-m", "pip", "install", "--quiet", wheel)
    assert done.returncode == 0, done.stdout + done.stderr
    return bin_dir


def test_the_wheel_ships_its_types_and_no_tests(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "estatebot/py.typed" in names
    assert "estatebot/emulator/demo_listings.json" in names
    assert not [name for name in names if name.startswith("tests/")]


def test_the_library_works_without_extras(clean_env: Path, tmp_path: Path) -> None:
    (tmp_path / "sheet.csv").write_text(
        "MLSNumber,City,Price\nATX1,Austin,500000\n", encoding="utf-8"
    )
    code = (
        "import estatebot as eb\n"
        "client = eb.Client(base_url='http://127.0.0.1:9', api_key='k', session_key='s')\n"
        "print(type(client).__name__, repr(client).count('k\\''))\n"
        "sheet = eb.read_sheet('sheet.csv')\n"
        "print(len(sheet.frame), sheet.frame['MLSNumber'].iloc[0])\n"
        "from importlib.util import find_spec\n"
        "print(find_spec('fastapi') is None, find_spec('uvicorn') is None)\n"
    )
    done = _run(clean_env / "python", "-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Client", "0", "1", "ATX1", "True", "True"]


def test_the_command_line_answers_help(clean_env: Path) -> None:
    done = _run(clean_env / "estatebot", "--help")
    assert done.returncode == 0, done.stderr
    for command in ("sync", "plan", "apply", "undo", "serve"):
        assert command in done.stdout


def test_serve_names_the_extra_to_install(clean_env: Path) -> None:
    done = _run(clean_env / "estatebot", "serve", "--port", "0")
    assert done.returncode == 1, done.stdout + done.stderr
    told = done.stdout + done.stderr
    assert "estatebot[emulator]" in told, told
    assert "Traceback" not in told
