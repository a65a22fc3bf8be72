"""Every public function and method documents its parameters, return value and errors in one
style (Google), as the generated API reference reads them (see `tests/docstring_rules.py`)."""

from __future__ import annotations

import docstring_rules as rules


def test_every_public_docstring_carries_its_sections() -> None:
    package = rules.load()
    paths = rules.public_paths()
    assert len(paths) > 40  # the package's own list, not an empty one
    lacking = []
    for path in paths:
        obj = package[path.removeprefix("estatebot.")]
        if obj.is_alias:
            obj = obj.final_target
        lacking += [str(lack) for lack in rules.lacks(obj)]
    assert not lacking, "\n".join(lacking)


def test_the_checker_sees_a_missing_parameter() -> None:
    # The rule can fail: a function whose docstring leaves out a parameter is named.
    import griffe

    module = griffe.visit(
        "sample",
        filepath=rules.ROOT / "sample.py",
        code='def f(a: int, b: int) -> int:\n    """Sum.\n\n    Args:\n        a: one.\n    """\n',
        docstring_parser=griffe.Parser.google,
    )
    found = [str(lack) for lack in rules.lacks(module["f"])]
    assert found == ["sample.f: parameter 'b' not under Args:", "sample.f: no Returns: section"]
