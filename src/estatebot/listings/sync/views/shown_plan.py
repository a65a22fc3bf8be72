"""What a view reads of a plan: :class:`ShownPlan`.

The views (:mod:`.view`, :mod:`.plan_html`, :mod:`.plots`) read a plan through this protocol, so
the plan (:mod:`~estatebot.listings.sync.plan.artifact`) uses its views and the views never import
it.
"""

from __future__ import annotations

from typing import Any, Protocol

from estatebot.listings.sync.plan.operations import HeldBack, InvalidRow, ListingRef, PlannedOp

__all__ = ["ShownPlan"]


class ShownPlan(Protocol):
    """What a view reads of a plan
    (:class:`~estatebot.listings.sync.plan.artifact.PlanArtifact`)."""

    key_type: str
    creates: list[PlannedOp]
    updates: list[PlannedOp]
    deletes: list[PlannedOp]
    unchanged: list[ListingRef]
    invalid: list[InvalidRow]
    kept: list[ListingRef]
    skipped_create: list[PlannedOp]
    held_back: list[HeldBack]
    refusals: list[str]
    notes: list[str]
    fingerprint: str
    remote_count: int
    options: dict[str, Any]
    created_at: str

    def operations(self) -> list[PlannedOp]:
        """Every operation apply performs, in order."""
        ...

    def counts(self) -> dict[str, int]:
        """The number of listings in each class, by name."""
        ...

    def summary(self) -> str:
        """One line of counts."""
        ...
