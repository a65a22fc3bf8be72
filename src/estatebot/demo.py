"""The demo behind ``make demo``: the main job end to end against a local emulator.

Starts the emulator with the sample chatbot (the week-1 market), pulls its listings, plans the
sync of the week-2 MLS export, writes the plan and its xlsx preview, applies it with a journal and
a backup, shows the report, and asks the chatbot, streamed, about a listing the sync just created.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from estatebot.api.client import Client
from estatebot.emulator import running
from estatebot.listings.remote.pull import pull_listings
from estatebot.listings.sheet.read import read_sheet
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.sync_plan import plan_sync

WEEK2 = Path("sample_data") / "mls_export_week2.xlsx"
#: The sample RESO export carries no currency column: its listings are in dollars.
READ_DEFAULTS = {"CurrencySymbol": "$"}


def find_sample(relative: Path = WEEK2) -> Path:
    """The sample file, looked for in the working folder and each folder above it."""
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / relative).is_file():
            return folder / relative
    raise FileNotFoundError(
        f"{relative} not found from {here}: run the demo from the project folder, or pass --sheet"
    )


def _step(text: str) -> None:
    typer.secho(f"\n== {text}", bold=True)


def run_demo(out: Path, sheet_path: Path | None = None) -> None:
    """Run the whole job; every output goes under ``out``."""
    started = time.perf_counter()
    sheet_path = sheet_path or find_sample()
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    journal = out / f"sync-{stamp}.journal"
    backup = out / f"backup-{stamp}.xlsx"

    with running(seed="demo") as server:
        _step(f"Emulator running at {server.base_url}, demo chatbot {server.serial}")
        with Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client:
            remote = pull_listings(client, server.serial, progress=False)
            counts = remote.groupby("SaleType").size().to_dict()
            typer.echo(f"pulled {len(remote)} listings from the chatbot: {counts}")

            _step(f"Reading {sheet_path.name}")
            sheet = read_sheet(sheet_path, defaults=READ_DEFAULTS)
            typer.echo(sheet.summary(limit=5))

            _step("Planning the sync (nothing is sent yet)")
            # The demo's own emulator holds no Location: sending it empty loses nothing (on a
            # real service, another tool may have set one; a plan then holds such updates back).
            plan = plan_sync(
                sheet, remote, key="MLSNumber", delete_missing=True, blank_unknown_location=True
            )
            typer.echo(f"plan: {plan}")
            plan_path = plan.save(out / "plan.json")
            preview = plan.to_excel(out / "plan.xlsx")
            for op in plan.updates[:3]:
                changed = ", ".join(f"{c.field} {c.before} -> {c.after}" for c in op.changes)
                typer.echo(f"  update {op.key}: {changed}")

            _step("Applying the plan (journaled, backed up)")
            # The emulator is gone after the demo: its record of values sent stays with it.
            report = apply_plan(
                plan,
                client,
                server.serial,
                journal=journal,
                backup=backup,
                progress=False,
                sent_values=out / "sent-values.sqlite",
            )
            typer.echo(report.summary())
            report_path = report.to_excel(out / "apply-report.xlsx")
            after = pull_listings(client, server.serial, progress=False)
            replan = plan_sync(
                sheet, after, key="MLSNumber", delete_missing=True, blank_unknown_location=True
            )
            typer.echo(f"pulled again: {len(after)} listings; a new plan finds: {replan}")

            if plan.creates:
                created = plan.creates[0]
                question = f"Tell me about MLS# {created.key}"
                _step(f"Asking the chatbot, streamed: {question!r} (a listing the sync created)")
                session = client.chat.create_session(server.serial)
                with client.chat.stream(session, question) as answer:
                    for text in answer:
                        typer.echo(text, nl=False)
                typer.echo()
                result = answer.result
                typer.echo(f"({result.total_tokens} tokens, session {session})")

    _step(f"Done in {time.perf_counter() - started:.1f} s. Outputs:")
    for label, path in [
        ("plan (JSON)", plan_path),
        ("plan preview", preview),
        ("journal", journal),
        ("backup", report.backup_path or backup),
        ("apply report", report_path),
    ]:
        typer.echo(f"  {label:13} {path}")
