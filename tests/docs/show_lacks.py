"""Print what public docstrings lack: ``python tests/docs/show_lacks.py [PATH_PREFIX ...]``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import docstring_rules as rules


def main(prefixes: list[str]) -> int:
    package = rules.load()
    shown = 0
    for path in rules.public_paths():
        obj = package[path.removeprefix("estatebot.")]
        if obj.is_alias:
            obj = obj.final_target
        for lack in rules.lacks(obj):
            if not prefixes or any(lack.where.startswith(p) for p in prefixes):
                print(lack)
                shown += 1
    print(f"{shown} lacking")
    return 1 if shown else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
