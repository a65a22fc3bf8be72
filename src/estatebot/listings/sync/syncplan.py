"""The plan users hold: a :class:`PlanArtifact` that can also carry itself out.

Kept apart from :mod:`~estatebot.listings.sync.artifact` so that the dependency runs one way:
the runner (:mod:`~estatebot.listings.sync.apply`) reads the artifact and never this module,
and this module is the only place where a plan meets its runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from estatebot.listings.sync import apply as runner
from estatebot.listings.sync.artifact import PlanArtifact

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.report import ApplyReport

__all__ = ["SyncPlan"]


class SyncPlan(PlanArtifact):
    """The outcome of ``plan_sync`` or ``plan_cleanup``: what would be done, and why.

    Display it in a notebook for a rich view, print it for the summary, export it with
    :meth:`to_frame` or :meth:`to_excel`, keep it with :meth:`save` / :meth:`load`, carry it out
    with :meth:`apply`. Equality compares content. :meth:`operations` lists what apply performs,
    in order.
    """

    def apply(self, client: Client, serial: str, **options: Any) -> ApplyReport:
        """Perform exactly this plan on the chatbot ``serial``; returns an ApplyReport.

        The same as :func:`estatebot.listings.sync.apply.apply_plan` (``journal``, ``backup``,
        ``concurrency``, ``force``, ... are passed on as ``options``).
        """
        return runner.apply_plan(self, client, serial, **options)
