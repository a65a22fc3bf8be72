"""How a plan is carried out: the options of an apply (and of a restore), checked once.

:class:`ApplyOptions` is the one object ``apply_plan``, the runner, ``restore`` and the command
line share. ``apply_plan`` and ``restore`` also take the options one keyword at a time, as their
users always have; :func:`resolve_options` turns either form into the one object.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from estatebot.listings.sync.apply.backup import check_backup_path

__all__ = ["ApplyOptions", "resolve_options"]


@dataclass(frozen=True)
class ApplyOptions:
    """How :func:`~estatebot.listings.sync.apply.phases.apply_plan` carries a plan out.

    ``concurrency`` threads send creates and updates and fetch the pages of the pull that checks
    them, ``delete_chunk`` keys go per delete request; ``journal`` (a path) makes the apply
    resumable; ``backup`` is where the before-image goes (``.json`` or ``.xlsx``; None: a
    timestamped file); ``progress`` shows a bar (None: when in a terminal or notebook);
    ``force`` applies a stale plan anyway;
    ``sent_values`` is the record of the fields List never returns (None: its default place,
    False: none); each window of ``recheck_window`` writes (None: ``8 × concurrency``; a delete
    request holds at most a window) is re-checked once ``recheck_after`` seconds (default 2)
    have passed since the stale check (None: never). The plan's guards are checked again
    before the first write (:mod:`.guards_again`): no more deletes, nor changes of MLSNumber or
    Url, than ``max_delete_fraction`` of the listings on the service unless
    ``force_delete_count`` / ``force_identity_count`` confirm that many. A restore reads
    ``concurrency``, ``progress`` and ``sent_values`` only.

    Checked when made: a count below 1 or a negative ``recheck_after`` raises ValueError, a
    backup that is neither ``.json`` nor ``.xlsx`` raises
    :class:`~estatebot.errors.PlanError`.
    """

    concurrency: int = 8
    journal: str | Path | None = None
    backup: str | Path | None = None
    progress: bool | None = None
    force: bool = False
    delete_chunk: int = 100
    sent_values: str | Path | bool | None = None
    #: Seconds after the stale check from which each window is re-checked: short, so an edit
    #: made on the service while a long apply runs is seen; a quick apply pays nothing.
    recheck_after: float | None = 2.0
    recheck_window: int | None = None
    max_delete_fraction: float = 0.2
    force_delete_count: int | None = None
    force_identity_count: int | None = None

    def __post_init__(self) -> None:
        # In this order, so a call with several bad options names the same one it always did.
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.delete_chunk < 1:
            raise ValueError(f"delete_chunk must be at least 1, got {self.delete_chunk}")
        if self.recheck_after is not None and self.recheck_after < 0:
            raise ValueError(f"recheck_after must be 0 or more seconds, got {self.recheck_after}")
        if self.recheck_window is not None and self.recheck_window < 1:
            raise ValueError(f"recheck_window must be at least 1, got {self.recheck_window}")
        if not 0 <= self.max_delete_fraction <= 1:  # also refuses nan
            raise ValueError(
                f"max_delete_fraction must be between 0 and 1, got {self.max_delete_fraction}"
            )
        for name in ("force_delete_count", "force_identity_count"):
            count = getattr(self, name)
            if count is not None and count < 0:
                raise ValueError(f"{name} must be 0 or more, got {count}")
        if self.backup is not None:
            check_backup_path(self.backup)

    @property
    def journal_path(self) -> Path | None:
        """The journal as a path (None: no journal)."""
        return Path(self.journal) if self.journal is not None else None

    @property
    def backup_path(self) -> Path | None:
        """The backup asked for, as a path (None: a timestamped file of the apply's choice)."""
        return Path(self.backup) if self.backup is not None else None

    @property
    def window(self) -> int:
        """The writes re-checked together: ``recheck_window``, else ``8 × concurrency``."""
        return self.recheck_window or 8 * self.concurrency

    @property
    def delete_request(self) -> int:
        """The keys per delete request: ``delete_chunk``, and never more than a window, so a
        window of deletes is re-checked as documented however large a chunk is allowed."""
        return min(self.delete_chunk, self.window)


def resolve_options(options: ApplyOptions | None, **keywords: Any) -> ApplyOptions:
    """The options of a call that takes them as ``options=`` or one keyword at a time.

    ``keywords`` are the call's loose options, each as given or at its default. Given both
    ways, the call is ambiguous: a keyword changed from its default beside ``options`` raises
    TypeError.
    """
    if options is None:
        return ApplyOptions(**keywords)
    defaults = {field.name: field.default for field in fields(ApplyOptions)}
    changed = sorted(name for name, value in keywords.items() if value != defaults[name])
    if changed:
        raise TypeError(
            f"pass the options either as options=ApplyOptions(...) or as keywords, not both "
            f"(given as keywords too: {', '.join(changed)})"
        )
    return options
