"""The command line's words: the library's Python hints as flags, values as a person reads
them, untrusted text escaped, and one documented exit-code table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
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
        ("then pass force_identity_count=196 to", "then pass --force-identity-count 196 to"),
        ("check mapping= and the key", "check --mapping FILE and the key"),
        ("or pass blank_unknown_location=True to send", "or pass --blank-unknown-location to send"),
        (
            "(pass max_memory= to allow more, e.g. max_memory='8 GiB', or split",
            '(pass --max-memory SIZE to allow more, e.g. --max-memory "8 GiB", or split',
        ),
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


def test_every_exit_code_is_in_the_one_table_and_the_docs() -> None:
    assert [code for code, _, _ in TABLE] == [int(code) for code in ExitCode]
    assert ExitCode.USAGE not in (0, 1, 2, 3)
    section = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
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


def test_the_library_hints_of_each_cause_read_as_the_command_line_s() -> None:
    from estatebot.api._hints import (
        API_KEY,
        SESSION_KEY,
        Asked,
        missing_key,
        not_found_hint,
        refused_key,
        unreachable,
    )

    assert in_cli_terms(f"Chatbot 'x' not found {not_found_hint('deadbeef')}").endswith(
        "(no chatbot 'deadbeef' for this key: check --serial / ESTATEBOT_SERIAL)"
    )
    assert in_cli_terms(missing_key(API_KEY)) == "no API key: set ESTATEBOT_API_KEY"
    assert in_cli_terms(refused_key(SESSION_KEY, 401)).endswith(
        "set ESTATEBOT_SESSION_KEY with a valid key"
    )
    configured = Asked(base_url="http://127.0.0.1:9")
    assert in_cli_terms(unreachable(configured, "refused")).endswith(
        "check the base URL (set ESTATEBOT_BASE_URL)"
    )
    default = Asked(base_url="https://service.example", default_base_url=True)
    assert in_cli_terms(unreachable(default, "refused")).endswith(
        "ESTATEBOT_BASE_URL is not set, so the default https://service.example was used: "
        "set ESTATEBOT_BASE_URL"
    )


def test_skipped_pages_are_said_in_the_terms_of_the_command() -> None:
    from estatebot.cli.error_messages import Settings

    warned = "1 page(s) could not be fetched and were skipped: [2]; the frame is incomplete"
    assert in_cli_terms(warned, Settings(command="pull")).endswith(
        "; their listings are not in the file"
    )
    assert in_cli_terms(warned, Settings(command="sync")).endswith("; their listings are missing")


@given(
    serial=st.text(st.characters(exclude_characters="'=", exclude_categories=("Cs",)), min_size=1),
    command=st.sampled_from(["pull", "sync", "cleanup", "ask", "plan", ""]),
    page=st.integers(1, 50),
    status=st.sampled_from([400, 401, 403, 404, 408, 429, 500, 502, 503]),
)
def test_no_library_hint_leaves_a_python_argument_or_a_flag_the_command_lacks(
    serial: str, command: str, page: int, status: int
) -> None:
    from estatebot.api._hints import (
        API_KEY,
        SESSION_KEY,
        Asked,
        credential_hint,
        not_found_hint,
        unreachable,
    )
    from estatebot.cli.error_messages import Settings
    from estatebot.errors import PullError, error_class_for

    cause = error_class_for(status)("no", operation="RealEstateList", status_code=status)
    asked = Asked(sent=(API_KEY,), unset=(SESSION_KEY,), base_url="http://h.example")
    messages = [
        not_found_hint(serial),
        credential_hint(401, asked),
        unreachable(asked, "down"),
        unreachable(Asked(base_url="http://h.example", default_base_url=True), "down"),
        str(PullError(page, cause)),
    ]
    run = Settings(command=command)
    for message in messages:
        shown = in_cli_terms(message, run)
        assert not re.search(r"\b(serial|api_key|session_key|base_url|on_error)=", shown), shown
        if command != "pull":
            assert "--skip-failed-pages" not in shown
    assert serial in in_cli_terms(not_found_hint(serial), run)


def test_library_warnings_are_one_line_in_the_command_line_s_terms_keys_masked() -> None:
    import warnings

    from estatebot._safe_cells import CellWarning
    from estatebot.api._redact import register_secret
    from estatebot.cli.error_messages import Settings, library_warnings_as_lines
    from estatebot.errors import PullWarning

    secret = "sk-warning-test-5c1e0a9f7b3d2e8a"
    register_secret(secret)
    message = (
        f"2 page(s) could not be fetched and were skipped: [2, 3]; the frame is incomplete "
        f"(key {secret}; pass lot_unit='sqft', 'sqm' or 'acres')\x1b[2J"
    )
    python_s = warnings.formatwarning
    with library_warnings_as_lines(Settings(command="pull")):
        ours = warnings.formatwarning(PullWarning(message), PullWarning, "pull.py", 96)
        foreign = warnings.formatwarning("not ours", FutureWarning, "other.py", 7)
        # Recorders still get the warning itself: only how it is printed changed.
        with pytest.warns(CellWarning, match="changed to fit"):
            warnings.warn("x.xlsx: 1 cell changed to fit a spreadsheet", CellWarning, 1)
    assert ours == (
        "warning: 2 page(s) could not be fetched and were skipped: [2, 3]; their listings are "
        "not in the file (key [redacted]; pass --lot-unit sqft, sqm or acres)\\x1b[2J\n"
    )
    assert foreign == python_s("not ours", FutureWarning, "other.py", 7)
    assert "FutureWarning: not ours" in foreign
    assert warnings.formatwarning is python_s  # put back after the block
