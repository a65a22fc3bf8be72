"""A fleet manifest read and checked: entries, issues like a sheet's, and refusals."""

from __future__ import annotations

import csv
import hashlib
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from estatebot.errors import ConfigurationError, SheetError
from estatebot.fleet.manifest import ChatbotEntry, ManifestError, read_manifest
from estatebot.fleet.manifest_fields import COLUMNS, parse_flag
from estatebot.fleet.row_filter import RowFilter
from estatebot.listings.sheet.result import ISSUE_COLUMNS

SECRET = "sk-live-0123456789abcdef"


def _write_csv(path: Path, header: list[str], *rows: list[str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "mls.csv").write_text("MLSNumber,ListAgentMlsId\nM1,A1\n", encoding="utf-8")
    (tmp_path / "tests.xlsx").write_bytes(b"placeholder")
    return tmp_path


def _issue(manifest_issues, row: int, field: str):  # type: ignore[no-untyped-def]
    at_row = manifest_issues["row"].eq(row).fillna(False)
    found = manifest_issues[at_row & manifest_issues["field"].eq(field).fillna(False)]
    assert len(found) == 1, manifest_issues
    return found.iloc[0]


def test_a_csv_manifest_gives_its_entries(folder: Path) -> None:
    path = _write_csv(
        folder / "fleet.csv",
        ["Serial", "Name", "Sheet", "Where", "Key", "Delete missing", "Defaults",
         "base-url-env", "API_KEY_ENV", "Session Key Env", "Tests"],
        ["abc123", "Agent A123", "mls.csv", "ListAgentMlsId = A1", "url", "YES",
         "CurrencySymbol=$; area unit=Square Feet", "EU_URL", "EU_KEY", "EU_SESSION", "tests.xlsx"],
        ["def456", "", str(folder / "mls.csv"), "", "", "", "", "", "", "", ""],
    )  # fmt: skip
    manifest = read_manifest(path)
    assert manifest.issues.empty
    first, second = manifest.entries
    assert first == ChatbotEntry(
        row=2,
        serial="abc123",
        name="Agent A123",
        sheet=folder / "mls.csv",
        where=RowFilter.parse("ListAgentMlsId = A1"),
        key="Url",
        delete_missing=True,
        defaults={"CurrencySymbol": "$", "AreaUnit": "Square Feet"},
        base_url_env="EU_URL",
        api_key_env="EU_KEY",
        session_key_env="EU_SESSION",
        tests=folder / "tests.xlsx",
        origin="fleet.csv row 2",
    )
    assert (second.row, second.label, second.key, second.delete_missing) == (
        3, "def456", "MLSNumber", False
    )  # fmt: skip
    assert second.api_key_env == "ESTATEBOT_API_KEY"
    assert manifest.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert pickle.loads(pickle.dumps(manifest.entries)) == manifest.entries
    assert hash(first) == hash(pickle.loads(pickle.dumps(first)))
    with pytest.raises(TypeError):
        first.defaults["City"] = "Austin"  # type: ignore[index]
    assert manifest.to_frame().loc[2, "where"] == "ListAgentMlsId = A1"
    assert "2 chatbots read, 2 valid, 0 rejected" in repr(manifest)
    assert manifest.summary()["valid"] == 2


def test_bad_rows_are_reported_like_bad_sheet_rows(folder: Path) -> None:
    path = _write_csv(
        folder / "fleet.csv",
        ["serial", "sheet", "where", "key", "delete_missing", "defaults", "api_key_env", "Colour"],
        ["ok1", "mls.csv", "", "", "", "", "", "red"],
        ["two words", "missing.csv", "Agent =", "ID", "maybe", "Colour=red", SECRET, ""],
        ["", "mls.csv", "", "", "", "Bedrooms=three", "", ""],
        ["ok2", "", "", "", "", "", "", ""],
    )
    manifest = read_manifest(path)
    assert list(manifest.issues.columns) == list(ISSUE_COLUMNS)
    assert [e.serial for e in manifest.entries] == ["ok1"]
    assert manifest.invalid_rows == [3, 4, 5]
    assert _issue(manifest.issues, 3, "serial")["value"] == "two words"
    sheet = _issue(manifest.issues, 3, "sheet")
    assert (sheet["column"], sheet["value"]) == ("sheet", "missing.csv")
    assert str(folder / "missing.csv") in sheet["message"]
    assert "expected a value" in _issue(manifest.issues, 3, "where")["message"]
    assert "MLSNumber or Url" in _issue(manifest.issues, 3, "key")["message"]
    assert _issue(manifest.issues, 3, "delete_missing")["value"] == "maybe"
    assert "CurrencySymbol" in _issue(manifest.issues, 3, "defaults")["message"]
    assert "Bedrooms" in _issue(manifest.issues, 4, "defaults")["message"]
    assert "blank" in _issue(manifest.issues, 4, "serial")["message"]
    assert "blank" in _issue(manifest.issues, 5, "sheet")["message"]
    # A key pasted where its variable's name belongs is refused and never shown.
    assert SECRET not in manifest.issues.to_string()
    assert SECRET not in str(manifest.summary(limit=50))
    assert SECRET not in manifest._repr_html_()
    unknown = manifest.warnings
    assert list(unknown["column"]) == ["Colour"]
    assert unknown["row"].isna().all()
    assert set(manifest.errors["severity"]) == {"error"}
    assert "row 3, serial: 'two words'" in str(manifest.summary(limit=50))


def test_a_serial_twice_is_refused_unless_on_two_services(folder: Path) -> None:
    path = _write_csv(
        folder / "fleet.csv",
        ["serial", "sheet", "base_url_env"],
        ["s1", "mls.csv", ""],
        ["s2", "mls.csv", ""],
        ["s1", "mls.csv", "ESTATEBOT_BASE_URL"],
        ["s2", "mls.csv", "OTHER_URL"],
    )
    manifest = read_manifest(path)
    assert [(e.serial, e.row) for e in manifest.entries] == [("s2", 3), ("s2", 5)]
    duplicates = manifest.errors
    assert list(duplicates["row"]) == [2, 4]
    assert all("rows 2, 4" in m for m in duplicates["message"])


def test_a_toml_manifest_with_shared_defaults(folder: Path) -> None:
    path = folder / "fleet.toml"
    path.write_text(
        'sheet = "mls.csv"\n'
        "[defaults]\n"
        "delete-missing = true\n"
        'defaults = { CurrencySymbol = "$", Bedrooms = 2 }\n'
        "[[chatbot]]\n"
        'serial = "s1"\n'
        'where = "ListAgentMlsId in (A1, A2)"\n'
        "defaults = { Bedrooms = 3 }\n"
        "[[chatbot]]\n"
        "serial = 42\n"
        "[[chatbot]]\n"
        'serial = "s3"\n'
        "delete_missing = false\n"
        "colour = 1\n",
        encoding="utf-8",
    )
    manifest = read_manifest(path)
    first, third = manifest.entries
    assert (first.row, first.sheet, first.delete_missing) == (1, folder / "mls.csv", True)
    assert dict(first.defaults) == {"CurrencySymbol": "$", "Bedrooms": "3"}
    assert first.where == RowFilter.parse("ListAgentMlsId in (A1, A2)")
    assert (third.row, third.delete_missing, third.origin) == (3, False, "fleet.toml chatbot 3")
    assert dict(third.defaults) == {"CurrencySymbol": "$", "Bedrooms": "2"}
    bad = _issue(manifest.issues, 2, "serial")
    assert (bad["value"], bad["severity"]) == ("42", "error")
    assert "chatbot 2, serial: '42'" in str(manifest.summary())
    assert list(manifest.warnings["column"]) == ["colour"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[chatbot]]\nserial = "s"\n', "sheet"),  # no sheet anywhere: no valid chatbot
        ('name = "all"\n[[chatbot]]\nserial = "s"\nsheet = "mls.csv"\n', "names one chatbot"),
        ('[defaults]\nkey = "ID"\n[[chatbot]]\nserial = "s"\nsheet = "mls.csv"\n', "key"),
        ('sheet = "mls.csv"\n[defaults]\nsheet = "mls.csv"\n[[chatbot]]\nserial = "s"\n', "twice"),
        ('[[chatbot]\nserial = "s"\n', "TOML"),
        ('sheet = "mls.csv"\n', "[[chatbot]]"),
    ],
)
def test_a_toml_manifest_that_cannot_be_used(folder: Path, text: str, expected: str) -> None:
    path = folder / "fleet.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ManifestError) as caught:
        read_manifest(path)
    assert "fleet.toml" in str(caught.value)
    assert expected in str(caught.value)
    assert isinstance(caught.value, SheetError)


def test_a_manifest_that_cannot_be_used_names_the_file_and_why(folder: Path) -> None:
    cases = {
        "missing.csv": None,
        "empty.csv": "\n\n",
        "noserial.csv": "name,sheet\nA,mls.csv\n",
        "twice.csv": "serial,Serial\na,b\n",
        "novalid.csv": "serial,sheet\n,mls.csv\n",
        "fleet.json": "{}",
    }
    reasons = ["cannot read", "empty", "no serial column", "both name", "no valid", "one of"]
    for (name, text), reason in zip(cases.items(), reasons, strict=True):
        path = folder / name
        if text is not None:
            path.write_text(text, encoding="utf-8")
        with pytest.raises(ManifestError) as caught:
            read_manifest(path)
        assert name in str(caught.value) or name.endswith(".json"), caught.value
        assert reason in str(caught.value), caught.value
    with pytest.raises(ManifestError) as caught:
        read_manifest(folder / "novalid.csv")
    assert list(caught.value.issues["row"]) == [2]


def test_client_settings_read_the_variables_when_called(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write_csv(
        folder / "fleet.csv",
        ["serial", "sheet", "base_url_env", "api_key_env", "session_key_env"],
        ["s1", "mls.csv", "EU_URL", "EU_KEY", "EU_SESSION"],
    )
    (entry,) = read_manifest(path).entries
    monkeypatch.setenv("EU_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("EU_KEY", SECRET)
    monkeypatch.delenv("EU_SESSION", raising=False)
    with pytest.raises(ConfigurationError) as caught:
        entry.client_settings()
    assert "EU_SESSION" in str(caught.value)
    assert "fleet.csv row 2" in str(caught.value)
    assert SECRET not in str(caught.value)
    monkeypatch.setenv("EU_SESSION", "session-value")
    settings_now = entry.client_settings()
    assert settings_now["base_url"] == "http://127.0.0.1:9"
    assert settings_now["api_key"].get_secret_value() == SECRET
    assert SECRET not in repr(settings_now)
    assert SECRET not in repr(entry)


def _spellings(name: str) -> st.SearchStrategy[str]:
    words = name.split("_")
    return st.tuples(
        st.lists(st.sampled_from([" ", "_", "-", "", "  "]), min_size=len(words) - 1,
                 max_size=len(words) - 1),
        st.lists(st.booleans(), min_size=len(name), max_size=len(name)),
    ).map(
        lambda drawn: "".join(
            c.upper() if up else c
            for c, up in zip(
                words[0] + "".join(s + w for s, w in zip(drawn[0], words[1:], strict=True)),
                drawn[1] + [False] * 10,
                strict=False,
            )
        )
    )  # fmt: skip


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_spelling_of_a_header_names_its_column(folder: Path, data: st.DataObject) -> None:
    headers = [data.draw(_spellings(name)) for name in COLUMNS]
    values = ["s1", "Agent A1", "mls.csv", "ListAgentMlsId = A1", "Url", "yes", "City=Austin",
              "U", "K", "S", "tests.xlsx"]  # fmt: skip
    path = _write_csv(folder / "fleet.csv", headers, values)
    manifest = read_manifest(path)
    assert manifest.issues.empty, headers
    (entry,) = manifest.entries
    assert (entry.name, entry.key, entry.delete_missing) == ("Agent A1", "Url", True)
    assert (entry.base_url_env, entry.api_key_env, entry.session_key_env) == ("U", "K", "S")
    assert dict(entry.defaults) == {"City": "Austin"}


@given(
    st.sampled_from(["yes", "y", "true", "1", "no", "n", "false", "0", ""]),
    st.lists(st.booleans(), min_size=5, max_size=5),
    st.sampled_from(["", " ", "  "]),
)
def test_yes_and_no_in_any_case(word: str, upper: list[bool], pad: str) -> None:
    spelled = pad + "".join(c.upper() if u else c for c, u in zip(word, upper, strict=False)) + pad
    assert parse_flag(spelled) is (word in ("yes", "y", "true", "1"))


@given(
    st.text(max_size=6).filter(
        lambda t: t.strip().casefold() not in {"yes", "y", "true", "1", "no", "n", "false", "0", ""}
    )
)
def test_anything_else_is_not_a_yes_or_no(word: str) -> None:
    with pytest.raises(ValueError, match="yes or no"):
        parse_flag(word)
