"""A fleet manifest written as analysts do, then saved again by a real spreadsheet program
(LibreOffice headless), reads back as the same chatbots."""

from __future__ import annotations

from pathlib import Path

import openpyxl
from tests.spreadsheet_program import needs_soffice, resave_csv, resave_xlsx

from estatebot.fleet.manifest import read_manifest

HEADERS = ["Serial", "Name", "Sheet", "Where", "Key", "Delete missing", "Defaults",
           "API key env", "Notes"]  # fmt: skip
ROWS = [
    ["3254a9d0424c4806b9ea3d0763ccf1bf", "Agent A123", "mls.csv", "ListAgentMlsId = A123", "",
     True, "CurrencySymbol=$; AreaUnit=Square Feet", "", "top agent"],
    ["0042", "Office 7", "mls.csv", "ListOfficeMlsId in (O1, 'O 2')", "Url", "no", "", "EU_KEY",
     None],
    [None, None, None, None, None, None, None, None, None],  # a blank row between chatbots
    [1234567, "Numbers", "mls.csv", "ListAgentMlsId = 77", "MLSNumber", 1, "Bedrooms=2", "", ""],
    ["bad serial", "", "missing.csv", "", "", "perhaps", "", "", ""],
]  # fmt: skip


def _manifest_xlsx(folder: Path) -> Path:
    (folder / "mls.csv").write_text("MLSNumber,ListAgentMlsId\nM1,A123\n", encoding="utf-8")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Chatbots"
    sheet.append(HEADERS)
    for row in ROWS:
        sheet.append(row)
    # The serial "0042" must stay text: a number format would drop its zeros.
    sheet["A3"].number_format = "@"
    path = folder / "fleet.xlsx"
    workbook.save(path)
    return path


def _relocated(manifest_folder: Path, folder: Path) -> None:
    """The files a manifest names, beside it: paths are read from its own folder."""
    (manifest_folder / "mls.csv").write_bytes((folder / "mls.csv").read_bytes())


@needs_soffice
def test_a_manifest_saved_by_libreoffice_reads_the_same(tmp_path: Path) -> None:
    original = _manifest_xlsx(tmp_path)
    expected = read_manifest(original)
    assert [e.serial for e in expected.entries] == [
        "3254a9d0424c4806b9ea3d0763ccf1bf", "0042", "1234567",
    ]  # fmt: skip
    assert expected.invalid_rows == [6]
    assert list(expected.warnings["column"]) == ["Notes"]

    for resave in (resave_xlsx, resave_csv):
        out = tmp_path / resave.__name__
        saved = resave(original, out)
        _relocated(out, tmp_path)
        manifest = read_manifest(saved)
        assert manifest.digest != expected.digest
        mine = [(e.row, e.serial, e.name, e.sheet.name, e.where, e.key, e.delete_missing,
                 dict(e.defaults), e.api_key_env) for e in manifest.entries]  # fmt: skip
        theirs = [(e.row, e.serial, e.name, e.sheet.name, e.where, e.key, e.delete_missing,
                   dict(e.defaults), e.api_key_env) for e in expected.entries]  # fmt: skip
        assert mine == theirs, saved
        assert all(e.sheet == out / "mls.csv" for e in manifest.entries)
        assert manifest.invalid_rows == expected.invalid_rows
        errors = manifest.errors[["row", "column", "field", "value"]]
        expected_errors = expected.errors[["row", "column", "field", "value"]]
        assert errors.reset_index(drop=True).equals(expected_errors.reset_index(drop=True))
