"""The shape of the package: public namespaces, the emulator as an extra, the rules of the rooms."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import estatebot
import estatebot.listings

ROOT = Path(__file__).resolve().parents[2]
INTERNALS = {"Any", "TYPE_CHECKING", "typing", "annotations", "_typing", "_progress", "_summary"}


@pytest.mark.parametrize("module", [estatebot, estatebot.listings], ids=lambda m: m.__name__)
def test_the_namespace_shows_public_names_only(module: types.ModuleType) -> None:
    shown = set(dir(module))
    assert shown == set(module.__all__)
    assert not shown & INTERNALS
    assert not {name for name in shown if name.startswith("_")} - {"__version__"}


def test_every_public_name_resolves() -> None:
    for name in estatebot.__all__:
        assert getattr(estatebot, name) is not None, name
    for name in estatebot.listings.__all__:
        assert getattr(estatebot.listings, name) is not None, name


def test_the_names_for_type_checkers_are_the_one_list_of_public_names() -> None:
    # The package keeps one list (name -> home module); the imports type checkers read must
    # name the same names from the same homes, or an editor and the running code disagree.
    import ast

    tree = ast.parse((ROOT / "src/estatebot/__init__.py").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    imported: dict[str, str] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            home = f"{node.module}.{alias.name}" if node.module == "estatebot" else node.module
            imported[alias.name] = str(home)
    homes = dict(estatebot._HOMES)
    homes.update({name: f"estatebot.{name}" for name in estatebot._SUBPACKAGES})
    assert imported == homes
    assert estatebot.__all__ == sorted([*homes, "__version__"])


def test_importing_the_package_and_its_command_line_loads_only_what_they_use() -> None:
    # Each public name loads on first use: the command line's start-up does not pay for the
    # notebook's widgets or the workbook reader it does not run.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import sys
                heavy = ("pandas", "pyarrow", "openpyxl", "ipywidgets", "python_calamine")
                import estatebot
                print(sorted(m for m in heavy if m in sys.modules))
                import estatebot.cli.main
                print(sorted(m for m in ("openpyxl", "ipywidgets") if m in sys.modules))
                assert estatebot.ChatPanel.__module__.startswith("estatebot.chat.panel")
                print(sorted(m for m in ("ipywidgets",) if m in sys.modules))
                """
            ),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:3] == ["[]", "[]", "['ipywidgets']"]


def test_a_name_the_package_does_not_have_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'read_sheets'"):
        estatebot.read_sheets  # noqa: B018 (the lookup is what is tested)


def test_the_listings_rooms_are_its_public_subpackages() -> None:
    from estatebot.listings import remote, sheet, sync

    assert estatebot.listings.read_sheet is sheet.read_sheet
    assert estatebot.listings.pull_listings is remote.pull_listings
    assert estatebot.listings.plan_sync is sync.plan_sync
    assert estatebot.plan_sync is sync.plan_sync


def run_without_server_packages(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where fastapi and uvicorn cannot be imported."""
    blocker = textwrap.dedent(
        """
        import importlib.abc, sys

        class NoServer(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("fastapi", "uvicorn", "starlette"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, NoServer())
        """
    )
    return subprocess.run(
        [sys.executable, "-c", blocker + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_client_and_the_listings_work_without_the_emulator_extra() -> None:
    done = run_without_server_packages(
        """
        import sys
        import estatebot as eb
        client = eb.Client(base_url="http://127.0.0.1:9", api_key="k", session_key="s")
        client.close()
        assert callable(eb.read_sheet) and callable(eb.plan_sync)
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("fastapi", "uvicorn"))
        assert not loaded, loaded
        print("ok")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_emulator_without_its_extra_says_which_extra_to_install() -> None:
    done = run_without_server_packages(
        """
        import estatebot as eb
        try:
            eb.emulator
        except ImportError as error:
            print(error)
        else:
            raise SystemExit("the emulator loaded without FastAPI")
        """
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'estatebot[emulator]'" in done.stdout
    assert "fastapi" in done.stdout


def test_the_emulator_extra_holds_the_web_server() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = " ".join(project["dependencies"]).lower()
    assert "fastapi" not in required
    assert "uvicorn" not in required
    extra = " ".join(project["optional-dependencies"]["emulator"]).lower()
    assert "fastapi" in extra
    assert "uvicorn" in extra


def test_the_rules_of_the_rooms_hold() -> None:
    linter = shutil.which("lint-imports", path=os.pathsep.join([str(Path(sys.executable).parent)]))
    assert linter is not None, "import-linter is a dev dependency"
    done = subprocess.run(
        [linter, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "7 kept, 0 broken" in done.stdout


def test_the_development_page_table_names_every_room() -> None:
    development = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    start = development.index("## How the code is laid out")
    section = development[start : development.index("\n## ", start + 1)]
    package = ROOT / "src" / "estatebot"
    rooms = sorted(
        str(init.parent.relative_to(package))
        for init in package.rglob("__init__.py")
        if init.parent != package
    )
    missing = [room for room in rooms if room.rsplit("/", 1)[-1] + "/" not in section]
    assert not missing, f"docs/development.md's table does not name {missing}"


def test_every_room_says_what_it_holds() -> None:
    package = ROOT / "src" / "estatebot"
    silent = [
        str(init.relative_to(package))
        for init in package.rglob("__init__.py")
        if not init.read_text(encoding="utf-8").lstrip().startswith('"""')
    ]
    assert not silent


def test_no_folder_of_the_listings_or_chat_holds_more_than_15_modules() -> None:
    package = ROOT / "src" / "estatebot"
    crowded = {
        str(folder.relative_to(package)): count
        for room in ("listings", "chat")
        for folder in [package / room, *(package / room).rglob("*/")]
        if folder.is_dir()
        and (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > 15
    }
    assert not crowded


# A command line group, the API group it calls and the emulator's route for it may share a name.
SHARED_BY_DESIGN = {"chat", "chatbots", "listings", "demo"}


def test_no_two_modules_share_a_name() -> None:
    package = ROOT / "src" / "estatebot"
    seen: dict[str, list[str]] = {}
    for path in package.rglob("*.py"):
        if path.stem not in ("__init__", "__main__"):
            seen.setdefault(path.stem, []).append(str(path.relative_to(package)))
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert set(shared) <= SHARED_BY_DESIGN, shared
