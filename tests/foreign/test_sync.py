"""The sync workflow (README "Workflow 1") against reply variants of the foreign server.

A real xlsx is written with openpyxl from listings, read with ``read_sheet`` (or a DataFrame),
planned with ``plan_sync`` against ``pull_listings`` and applied with ``plan.apply`` (journal and
backup in the test's folder). Whatever the deployment's reply style, a sheet equal to the server
plans nothing, and after an apply the server's listings are exactly the sheet's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from foreign.data import edited_export, sheet_rows, write_xlsx
from foreign.helpers import differences
from foreign.server import ForeignServer
from foreign.variant import Variant

SYNC_VARIANTS: dict[str, Variant] = {
    "contract": Variant(),
    "camel": Variant(camel_case=True),
    "camel-money-N/A": Variant(camel_case=True, numbers="money", absent="N/A"),
    "texts-as-others-write-them": Variant(
        sale_type_text="upper", images_text="pipe", extensions_text="pairs", null_texts=True
    ),
    "cap-9-no-count": Variant(page_cap=9, virtual_count="missing"),
    "cap-9-count-low-404-past-end": Variant(page_cap=9, virtual_count="low", past_end="http404"),
    "bare-data-bom-gzip-code-text": Variant(
        delete_bare=True, create_text=True, bom=True, gzip=True, code_text=True, null_message=True
    ),
}
SEEDED = 20


def _desired(seeded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the export says: 3 listings gone, 4 new, 6 changed (see ``edited_export``)."""
    return edited_export(seeded)


def _counts(plan: eb.SyncPlan) -> dict[str, Any]:
    counts = plan.summary().counts
    return {name: counts[name] for name in ("create", "update", "delete", "invalid", "held_back")}


def _read(source: Path | pd.DataFrame) -> eb.Sheet:
    return eb.read_sheet(source, defaults={"CurrencySymbol": "$"})


@pytest.mark.parametrize(
    ("server", "source"),
    [
        *((variant, "xlsx") for variant in SYNC_VARIANTS.values()),
        (SYNC_VARIANTS["contract"], "dataframe"),
        (SYNC_VARIANTS["camel-money-N/A"], "dataframe"),
    ],
    ids=[
        *(f"{name}-xlsx" for name in SYNC_VARIANTS),
        "contract-dataframe",
        "camel-money-N/A-dataframe",
    ],
    indirect=["server"],
)
def test_sheet_equal_to_the_server_plans_nothing(
    server: ForeignServer, client: eb.Client, tmp_path: Path, source: str
) -> None:
    """An export (an xlsx, or a DataFrame) holding exactly the server's listings: no create,
    update or delete."""
    bodies = server.seed(SEEDED)
    sheet_source: Path | pd.DataFrame = (
        write_xlsx(tmp_path / "export.xlsx", bodies)
        if source == "xlsx"
        else pd.DataFrame(sheet_rows(bodies))
    )
    sheet = _read(sheet_source)
    remote = eb.pull_listings(client, server.serial, progress=False)
    assert len(remote) == SEEDED
    plan = eb.plan_sync(sheet, remote, key="MLSNumber", delete_missing=True)
    assert _counts(plan) == {"create": 0, "update": 0, "delete": 0, "invalid": 0, "held_back": 0}
    assert plan.summary().counts["unchanged"] == SEEDED


# An apply costs most of a second, so five of the variants are applied (all are planned above).
APPLY_VARIANTS = (
    "contract",
    "camel-money-N/A",
    "texts-as-others-write-them",
    "cap-9-count-low-404-past-end",
    "bare-data-bom-gzip-code-text",
)


@pytest.mark.parametrize(
    "server", [SYNC_VARIANTS[name] for name in APPLY_VARIANTS], ids=APPLY_VARIANTS, indirect=True
)
def test_apply_makes_the_server_equal_to_the_sheet(
    server: ForeignServer, client: eb.Client, tmp_path: Path
) -> None:
    """Plan 4 creates, 6 updates, 3 deletes; apply them; the server then holds the sheet's
    listings exactly, and a new plan from a new pull is empty."""
    desired = _desired(server.seed(SEEDED))
    sheet = _read(write_xlsx(tmp_path / "export.xlsx", desired))
    remote = eb.pull_listings(client, server.serial, progress=False)
    plan = eb.plan_sync(sheet, remote, key="MLSNumber", delete_missing=True)
    assert _counts(plan) == {"create": 4, "update": 6, "delete": 3, "invalid": 0, "held_back": 0}

    report = plan.apply(
        client, server.serial, journal=tmp_path / "sync.journal", backup=tmp_path / "backup.json"
    )
    assert report.ok, report.failures.to_dict("records")
    done = report.counts()
    assert {word: done.get(word) for word in ("created", "updated", "deleted")} == {
        "created": 4,
        "updated": 6,
        "deleted": 3,
    }
    assert (tmp_path / "backup.json").exists()
    assert (tmp_path / "sync.journal").exists()
    assert differences(server, desired) == []

    again = eb.plan_sync(
        sheet, eb.pull_listings(client, server.serial, progress=False), delete_missing=True
    )
    assert _counts(again) == {"create": 0, "update": 0, "delete": 0, "invalid": 0, "held_back": 0}


@pytest.mark.parametrize("server", [Variant(camel_case=True, page_cap=7)], indirect=True)
def test_restore_puts_back_what_the_apply_changed(
    server: ForeignServer, client: eb.Client, tmp_path: Path
) -> None:
    """The backup an apply writes restores the updated and deleted listings as they were."""
    seeded = server.seed(12)
    desired = _desired(seeded)[: 12 - 3]  # updates and 3 deletes, no creates
    sheet = _read(write_xlsx(tmp_path / "export.xlsx", desired))
    plan = eb.plan_sync(
        sheet,
        eb.pull_listings(client, server.serial, progress=False),
        delete_missing=True,
        force_delete_count=3,
    )
    backup = tmp_path / "backup.xlsx"
    assert plan.apply(client, server.serial, backup=backup).ok
    assert differences(server, desired) == []
    # The deleted listings were never sent by estatebot: their unit is given, never guessed.
    eb.restore(backup, client, server.serial, defaults={"AreaUnit": "Square Feet"})
    # Every compared field is one List returns, so the backup knows it: all come back.
    assert differences(server, seeded) == []
