"""``estatebot demo``: the main job end to end against a local emulator (no account needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["demo"]


def demo(
    out: Annotated[
        Path, typer.Option(file_okay=False, help="Folder for the demo's outputs.")
    ] = Path("out/demo"),
    sheet: Annotated[
        Path | None,
        typer.Option(dir_okay=False, help="The week-2 export (default: sample_data/)."),
    ] = None,
) -> None:
    """Run the main job end to end against a local emulator (no account needed)."""
    from estatebot.demo import run_demo  # ImportError names the extra when it is missing

    run_demo(out, sheet)
