"""``python -m estatebot.sample``: write the sample files (see :func:`.generate.generate`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .generate import generate


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, write the files, and list them (``fleet FOLDER ...`` writes a
    fleet's sample instead: see :mod:`estatebot.sample.fleet_sample`)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["fleet"]:
        # Imported here: a fleet's sample needs the emulator extra, the market's does not.
        from estatebot.sample.fleet_sample import main as fleet_main

        return fleet_main(arguments[1:])
    parser = argparse.ArgumentParser(
        prog="python -m estatebot.sample",
        description="Write seeded sample MLS exports, chat tests and a README.",
    )
    parser.add_argument("--out", type=Path, default=Path("sample_data"), help="output folder")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument("-n", "--listings", type=int, default=200, help="listings in week 1")
    parser.add_argument(
        "--pitfalls", action="store_true", help="also write mls_export_pitfalls.xlsx"
    )
    parser.add_argument(
        "--demo-seed",
        type=Path,
        default=None,
        metavar="PATH",
        help="also write the emulator's demo listings (JSON) read from the week-1 export",
    )
    args = parser.parse_args(argv)
    result = generate(
        args.out, args.seed, args.listings, pitfalls=args.pitfalls, demo_seed=args.demo_seed
    )
    for path in result.files.values():
        print(f"{path}  ({path.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
