"""The command line's words: the library's Python hints as flags, values as a person reads
them, untrusted text escaped, and one documented exit-code table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from estatebot.cli.codes import TABLE, ExitCode
from estatebot.cli.console import safe
from estatebot.cli.error_messages import in_cli_terms
from estatebot.cli.values import change_text, plain_value

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("library", "cli"),
    [
        ("the sheet gives areas but no AreaUnit: no header maps to it and no default is given "
         "(pass mapping= or defaults={'AreaUnit': 'Square Feet'}).",
         "(pass --mapping FILE or --default \"AreaUnit=Square Feet\")."),
        ("has no column and no default (add a CurrencySymbol column, mapping= or defaults=)",
         "(add a CurrencySymbol column, --mapping FILE or --default CurrencySymbol=VALUE)"),
        ("(add a AreaUnit column or defaults=): required, but empty",
         "(add a AreaUnit column or --default AreaUnit=VALUE): required, but empty"),
        ("gives lot sizes without a unit: pass lot_unit='sqft', 'sqm' or 'acres'",
         "pass --lot-unit sqft, sqm or acres"),
        ("Pass encoding='cp1252' for a file from Excel on Windows",
         "Pass --encoding cp1252 for a file from Excel on Windows"),
        ("pass the encoding it was saved in (encoding=...)",
         "pass the encoding it was saved in (--encoding NAME)"),
        ("(pass encoding='utf-16-le' or 'utf-16-be')",
         "(pass --encoding utf-16-le or --encoding utf-16-be)"),
        ("Make a new plan from a fresh pull, or pass force=True to apply it anyway",
         "or pass --force to apply it anyway"),
        ("then pass force_delete_count=45 to confirm", "then pass --force-delete-count 45"),
        ("more than max_delete_fraction=0.2 allows (40)", "more than --max-delete-fraction 0.2"),
        ("pull again, or pass allow_incomplete=True", "pull again, or pass --allow-incomplete"),
        ("keep one, or pass mapping= to send the other elsewhere (e.g. {header: "
         "'ExtensionColumn'} or {header: 'ignore'})",
         "pass --mapping FILE to send the other elsewhere (a row 'HEADER,ExtensionColumn'"),
        ("Edit needs the API key: pass api_key= or set ESTATEBOT_API_KEY",
         "Edit needs the API key: set ESTATEBOT_API_KEY"),
        ("the reader reported 2 warnings (see the sheet's issues)",
         "the reader reported 2 warnings (listed above)"),
        ("cannot be opened: x; pass sent_values= another path, or sent_values=False to keep none",
         "pass --sent-values FILE for another file, or --no-sent-values to keep none"),
    ],
)  # fmt: skip
def test_python_hints_become_flags(library: str, cli: str) -> None:
    shown = in_cli_terms(library)
    assert cli in shown
    assert not re.search(r"\b[a-z_]+=(True|False|'|\.\.\.|\{| |$)", shown), shown


def test_money_is_formatted_with_the_listing_currency() -> None:
    assert plain_value("SalePrice", 1289500.0, "$") == "$1,289,500"
    assert plain_value("UnitAreaPrice", 2.5, "$") == "$2.50"
    assert plain_value("RentPrice", 2400, "USD") == "USD 2,400"
    assert plain_value("YearBuilt", 1984, "$") == "1984"  # not money, not grouped
    assert plain_value("LotArea", 43560.0) == "43,560"
    assert plain_value("Description", None) == "(none)"


def text_of(rendered: object) -> str:
    console = Console(width=200, no_color=True)
    with console.capture() as captured:
        console.print(rendered, end="")
    return captured.get()


def test_a_long_text_change_shows_its_changed_words_in_context() -> None:
    before = ("Well-kept 2-bedroom single-family home in Boston, built in 1976, with in-unit "
              "laundry and a fenced backyard. Available July 1; no smoking.")  # fmt: skip
    after = before.replace("fenced", "large fenced") + " New roof in 2025."
    shown = text_of(change_text("Description", before, after))
    assert shown == (
        '"... in-unit laundry and a {+large+} fenced backyard. Available July 1; no smoking. '
        '{+New roof in 2025.+}"'
    )
    removed = text_of(change_text("Description", after, before))
    assert "[-large-]" in removed
    assert "[-New roof in 2025.-]" in removed


def test_short_values_change_as_before_and_after() -> None:
    assert text_of(change_text("SalePrice", 480000.0, 489900.0, "$")) == "$480,000 -> $489,900"
    assert text_of(change_text("Tours", None, "OpenHouse")) == '(none) -> "OpenHouse"'
    images = text_of(change_text("Images", ["a.jpg", "b.jpg"], ["a.jpg", "c.jpg"]))
    assert images == "2 -> 2 items (+ c.jpg, - b.jpg)"


def test_control_characters_are_shown_not_obeyed() -> None:
    assert safe("red\x1b[31m bell\x07 cr\r") == "red\\x1b[31m bell\\x07 cr\\x0d"
    assert safe("a\tb\nc", one_line=True) == "a\\tb\\nc"
    assert safe("a\tb\nc") == "a\tb\nc"
    assert safe("\x9b31m") == "\\x9b31m"  # the one-byte CSI of C1


def test_every_exit_code_is_in_the_one_table_and_the_readme() -> None:
    assert [code for code, _, _ in TABLE] == [int(code) for code in ExitCode]
    assert ExitCode.USAGE not in (0, 1, 2, 3)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## The command line") :]
    section = section[: section.index("\n## ", 1)]
    documented = [int(code) for code in re.findall(r"^\| (\d+) \|", section, re.MULTILINE)]
    assert documented == [int(code) for code in ExitCode]


def test_a_failed_page_hint_names_the_pull_flag_only_where_it_exists() -> None:
    from estatebot.cli.error_messages import Settings
    from estatebot.errors import PullError, ServerError

    message = str(PullError(3, ServerError("boom", status_code=500, operation="RealEstateList")))
    assert "on_error='skip'" in message
    assert "(pass --skip-failed-pages to keep the pages that did arrive)" in in_cli_terms(
        message, Settings(command="pull")
    )
    assert in_cli_terms(message, Settings(command="sync")).endswith(
        "(try again when the service answers)"
    )
    # Outside a command (no context): the default settings, which name no command.
    assert in_cli_terms(message).endswith("(try again when the service answers)")


def test_the_hint_follows_the_settings_in_the_running_command_context() -> None:
    import typer

    from estatebot.cli.error_messages import Settings, current_settings
    from estatebot.cli.main import app
    from estatebot.errors import PullError, ServerError

    message = str(PullError(3, ServerError("boom", status_code=500, operation="RealEstateList")))
    group = typer.main.get_command(app)
    root = typer.Context(group, obj=Settings(command="pull"))
    pull = typer.Context(group.commands["pull"], parent=root)  # type: ignore[attr-defined]
    with root, pull:  # a command's context, under the app's
        assert current_settings() == Settings(command="pull")
        assert "--skip-failed-pages" in in_cli_terms(message)
    assert current_settings() == Settings()
