"""The plan's guards, checked again when it is applied, against the service as it is.

A plan is guarded when it is made (:mod:`estatebot.listings.sync.plan.guards`): no more deletes,
and no more changed identities (MLSNumber, Url), than ``max_delete_fraction`` of the remote
listings unless their exact count is confirmed. A plan file or run folder can be edited by hand
and sealed again (the seal is a digest anyone can recompute), so the apply does not take the
file's word: just before the first write it counts what it is about to do to the listings the
stale check has just pulled, and refuses, naming the listings, past the fraction the apply was
given, unless the apply (or the planner, for a plan made in this process) confirmed that count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from estatebot.errors import PlanError
from estatebot.listings.sync.plan.guards import (
    FEW_IDENTITY_CHANGES,
    IDENTITY_FIELDS,
    changes_identity,
)
from estatebot.listings.sync.plan.operations import Change

if TYPE_CHECKING:
    import pandas as pd

    from estatebot.listings.sync.apply.apply_options import ApplyOptions
    from estatebot.listings.sync.apply.send_tasks import Task
    from estatebot.listings.sync.apply.stale_check import Checked, Remote
    from estatebot.listings.sync.plan.artifact import Confirmed

__all__ = ["check_guards_again"]

#: Listings a refusal names before it counts the rest.
_SHOWN = 10


def check_guards_again(
    checked: Checked,
    remote: Remote,
    options: ApplyOptions,
    confirmed: Confirmed | None,
) -> None:
    """Raise PlanError, before anything is written, when what the check would send deletes or
    re-identifies more of ``remote``'s listings than allowed and unconfirmed.

    The fraction is the larger of the apply's ``max_delete_fraction`` and the one the plan was
    made with in this process (``confirmed``); a count is confirmed by the apply's
    ``force_delete_count`` / ``force_identity_count``, or by the planner's for a plan made in
    this process. A confirmed count covers what is left of it (a resumed run has done some).
    """
    fraction = options.max_delete_fraction
    confirmed_deletes = options.force_delete_count
    confirmed_identities = options.force_identity_count
    if confirmed is not None:
        fraction = max(fraction, confirmed.max_delete_fraction)
        confirmed_deletes = _larger(confirmed_deletes, confirmed.deletes)
        confirmed_identities = _larger(confirmed_identities, confirmed.identities)
    total = len(remote.frame)
    send, found = checked.send, checked.found
    deletes = [t for t in send if t.action == "delete" and found[t.op]]
    renamed = [
        named
        for t in send
        if t.action == "update" and (named := _renaming(t, found[t.op], remote.frame))
    ]
    _refuse_past(
        [f"{t.key_type} {t.key}" for t in deletes],
        total,
        fraction,
        confirmed_deletes,
        doing="delete",
        flag="force_delete_count",
    )
    _refuse_past(
        renamed,
        total,
        fraction,
        confirmed_identities,
        doing="change the MLSNumber or Url of",
        flag="force_identity_count",
        few=FEW_IDENTITY_CHANGES,
    )


def _larger(first: int | None, second: int | None) -> int | None:
    given = [count for count in (first, second) if count is not None]
    return max(given) if given else None


def _renaming(task: Task, found: Sequence[int], frame: pd.DataFrame) -> str | None:
    """How an update renames its listing as the service holds it now (its body against the
    listing at ``found`` in the pulled ``frame``, not the plan's record of changes, which a hand
    can edit apart), or None."""
    if len(found) != 1 or task.body is None:
        return None
    for name in IDENTITY_FIELDS:
        if name not in task.body:
            continue
        now = frame[name].iat[found[0]]  # the two fields, not the whole row: 2 of 40
        if changes_identity([Change(name, now, task.body[name])]):
            return f"{task.key_type} {task.key}: {name} {now!r} → {task.body[name]!r}"
    return None


def _refuse_past(
    named: Sequence[str],
    total: int,
    fraction: float,
    confirmed: int | None,
    *,
    doing: str,
    flag: str,
    few: int = 0,
) -> None:
    count = len(named)
    limit = max(fraction * total, few)
    if count <= limit or (confirmed is not None and count <= confirmed):
        return
    share = count / total if total else 1.0
    shown = ", ".join(named[:_SHOWN])
    more = f" and {count - _SHOWN} more" if count > _SHOWN else ""
    ask = (
        f"the apply was given {flag}={confirmed}, fewer than that"
        if confirmed is not None
        else "nothing confirmed that many"
    )
    raise PlanError(
        f"the plan would {doing} {count} of the {total} listings on the service now "
        f"({share:.1%}), more than max_delete_fraction={fraction:g} allows ({math.floor(limit)}), "
        f"and {ask}: {shown}{more}. Nothing was written. A plan is checked again when it is "
        f"applied, whatever its file says: check the plan, then pass {flag}={count} to confirm "
        "exactly this many",
        value=count,
    )
