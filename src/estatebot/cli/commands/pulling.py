"""``estatebot pull``: every listing of a chatbot into a spreadsheet."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from estatebot.cli.error_messages import current_settings, library_warnings_as_lines
from estatebot.cli.flags.shared_options import ConcurrencyOption, ProgressOption, SerialOption
from estatebot.cli.report_view import shown_path

__all__ = ["pull"]


class SaleType(StrEnum):
    """Listings for sale or for rent."""

    SALE = "for_sale"
    RENT = "for_rent"


def pull(
    serial: SerialOption,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", dir_okay=False, help="listings.xlsx, .csv or .parquet"),
    ],
    city: Annotated[str | None, typer.Option(help="Only listings in this city.")] = None,
    sale_type: Annotated[
        SaleType | None, typer.Option(case_sensitive=False, help="Only for_sale or for_rent.")
    ] = None,
    skip_failed_pages: Annotated[
        bool,
        typer.Option(
            "--skip-failed-pages",
            help="Keep the pages that arrived when one still fails after retries (the file "
            "then lacks its listings, and says so).",
        ),
    ] = False,
    concurrency: ConcurrencyOption = 8,
    progress: ProgressOption = None,
) -> None:
    """Pull every listing of a chatbot into a spreadsheet (exit 0, or 1 on an error).

    What the library warns of (pages skipped, cells made safe for the spreadsheet) is shown on
    stderr, one ``warning:`` line each.
    """
    from estatebot.api.client import Client
    from estatebot.listings.export import write_frame
    from estatebot.listings.remote.pull import pull_listings

    with library_warnings_as_lines(current_settings()):
        with Client() as client:
            frame = pull_listings(
                client,
                serial,
                city=city,
                sale_type=sale_type.value if sale_type is not None else None,
                concurrency=concurrency,
                progress=progress,
                on_error="skip" if skip_failed_pages else "raise",
            )
        path = write_frame(frame, out)
    typer.echo(f"{len(frame)} listings written to {shown_path(path)}")
