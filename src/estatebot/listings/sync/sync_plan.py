"""The plan users hold: a :class:`PlanArtifact` with its views, that can also carry itself out.

This is the one place where a plan meets its views (:mod:`.views`) and its runner
(:mod:`.apply`): planning and applying read the bare artifact
(:mod:`~estatebot.listings.sync.plan.artifact`), so neither imports the views, and the
planners' results are handed out as :class:`SyncPlan` here (:func:`plan_sync`,
:func:`plan_cleanup`, and :func:`plan_undo`, the plan that reverses a run).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, Self

import pandas as pd

from estatebot.listings.sync.apply import phases, undo
from estatebot.listings.sync.plan import cleanup_planner, sync_planner
from estatebot.listings.sync.plan.artifact import PlanArtifact
from estatebot.listings.sync.views import plan_html, plan_plots, plan_tables

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from estatebot.api.client import Client
    from estatebot.listings.sync.report.apply_report import ApplyReport

__all__ = ["SyncPlan", "plan_cleanup", "plan_sync", "plan_undo"]

_P = ParamSpec("_P")


class SyncPlan(PlanArtifact):
    """The outcome of `plan_sync` or `plan_cleanup`: what would be done, and why.

    Display it in a notebook for a rich view, print it for the summary, export it with
    `to_frame` or `to_excel`, keep it with `save` / `load`, carry it out with `apply`.
    Equality compares content. `operations` lists what apply performs, in order.
    """

    @classmethod
    def of(cls, artifact: PlanArtifact) -> Self:
        """The plan `artifact` holds, as a SyncPlan (the same items, not copies).

        Args:
            artifact: The plan to hand out, as a planner made it.

        Returns:
            A `SyncPlan` sharing the items of `artifact`.
        """
        return cls(**artifact.field_values())

    def _repr_html_(self) -> str:
        return plan_html.render_html(self)

    def view(
        self,
        action: str | Sequence[str] | None = None,
        field: str | Sequence[str] | None = None,
    ) -> plan_html.PlanView:
        """A part of the plan to display: `plan.view(action="update", field="Price")`.

        Args:
            action: `"create"`, `"update"`, `"delete"`, `"invalid"`, `"held back"` or
                `"skipped create"`, or a list of them (None: every action).
            field: A listing field's name in any case, or `"Price"` (the listing's price:
                SalePrice and RentPrice, not UnitAreaPrice or the other amounts), or a list of
                them, which shows the updates of those fields only (None: every field).

        Returns:
            A `PlanView`, shown as HTML in a notebook.

        Raises:
            ValueError: When an action or a field is unknown; the message lists the known ones.
        """
        return plan_html.PlanView(self, action, field)

    def plot(self, *, remote: pd.DataFrame | None = None) -> Figure:
        """A figure of the plan (matplotlib: `pip install 'estatebot[plot]'`).

        A sync plan: the listings by action, and each price change in percent. A cleanup plan:
        the listings' days on market, those it deletes coloured, with the rule's threshold.

        Args:
            remote: The pulled listings, which a cleanup plan read back from a file needs
                (None: the days on market the plan keeps).

        Returns:
            A matplotlib `Figure`.

        Raises:
            ImportError: When matplotlib is not installed.
            ValueError: When a cleanup plan read back from a file is plotted without `remote`.
        """
        return plan_plots.plot_plan(self, remote=remote)

    # -- exporting

    @property
    def frame(self) -> pd.DataFrame:
        """The plan as a table, one row per operation and changed field (see `to_frame`)."""
        return self.to_frame()

    def to_frame(self, *, wide: bool = False, include_unchanged: bool = False) -> pd.DataFrame:
        """The plan as a table, one row per operation.

        Args:
            wide: One row per operation with action, key, row, ID, reason, `changed` (the
                changed field names) and every listing field's value after the operation,
                instead of the long form (default).
            include_unchanged: Also list the unchanged and kept listings.

        Returns:
            A new DataFrame. The long form has one row per operation, and one per changed
                field of an update, with columns action, key, row, ID, field, before, after
                and reason; held-back values, invalid rows and skipped creates are included
                (`reason` holds why).
        """
        return plan_tables.to_frame(self, wide=wide, include_unchanged=include_unchanged)

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write a workbook with a sheet per action, changed cells highlighted; returns the path.

        Its folder is made when missing, as every result's `to_excel` does.

        Args:
            path: The workbook to write (`.xlsx`).

        Returns:
            The path written, as a `Path`.
        """
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return plan_tables.to_excel(self, path)

    def apply(self, client: Client, serial: str, **options: Any) -> ApplyReport:
        """Perform exactly this plan on the chatbot `serial`; returns an ApplyReport.

        The same as `estatebot.apply_plan`, which documents the options.

        Args:
            client: The `Client` that pulls the listings and sends the writes.
            serial: The chatbot's serial number.
            **options: The options of `apply_plan`, passed on: `journal`, `backup`,
                `concurrency`, `force`, ... or one `options=ApplyOptions(...)`.

        Returns:
            An `ApplyReport`, one row per operation, in the plan's order.

        Raises:
            PlanError: When the plan is stale or its guards refuse it, or the journal belongs
                to another run (see `apply_plan`).
            PullError: When the pull before the first write fails.
            TypeError: When the options come both as `options=` and as keywords, or one
                is not an option of `apply_plan`.
            ValueError: When an option is out of range.
        """
        return phases.apply_plan(self, client, serial, **options)


def _handed_out(planner: Callable[_P, PlanArtifact]) -> Callable[_P, SyncPlan]:
    """``planner`` with its plan handed out as a :class:`SyncPlan` (same signature, same doc)."""

    @functools.wraps(planner)
    def planned(*args: _P.args, **kwargs: _P.kwargs) -> SyncPlan:
        return SyncPlan.of(planner(*args, **kwargs))

    return planned


plan_sync = _handed_out(sync_planner.plan_sync)
"""Plan how to make a chatbot's listings match a sheet: `sync_planner.plan_sync`, its plan a
`SyncPlan`."""
plan_cleanup = _handed_out(cleanup_planner.plan_cleanup)
"""Plan the deletion of stale listings: `cleanup_planner.plan_cleanup`, its plan a `SyncPlan`."""
plan_undo = _handed_out(undo.plan_undo)
"""Plan the exact reverse of a run: `undo.plan_undo`, its plan a `SyncPlan`."""
