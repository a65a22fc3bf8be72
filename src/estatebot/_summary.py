"""What every result object's ``summary()`` returns: a line to read that carries its figures.

``Sheet``, ``SyncPlan``, ``ApplyReport``, ``ChatTestResults``, ``ChatRunChanges`` and
``NormalizeResult`` answer ``summary()`` with a :class:`Summary`: text, so it prints, compares and
searches like the string it is, and a read-only mapping of the figures behind that text, so a
script need not parse it::

    s = plan.summary()
    print(s)                  # 12 create, 40 update, 3 delete, 900 unchanged, 2 invalid
    s["update"], s.counts     # 40, {'create': 12, 'update': 40, ...}
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from types import MappingProxyType
from typing import SupportsIndex, overload

__all__ = ["Figure", "Summary"]

#: A figure of a summary: a count, a rate or a duration; None when there is nothing to measure.
Figure = int | float | None


class Summary(str):
    """A result's summary: the text a person reads, with its figures by name in :attr:`counts`.

    ``summary["name"]`` looks a figure up (an integer or a slice indexes the text, as for any
    string); :meth:`keys`, :meth:`values` and :meth:`items` walk the figures.
    """

    counts: Mapping[str, Figure]

    def __new__(cls, text: str, counts: Mapping[str, Figure] | None = None) -> Summary:
        summary = super().__new__(cls, text)
        summary.counts = MappingProxyType(dict(counts or {}))
        return summary

    @overload
    def __getitem__(self, key: str) -> Figure: ...
    @overload
    def __getitem__(self, key: SupportsIndex | slice) -> str: ...
    def __getitem__(self, key: str | SupportsIndex | slice) -> Figure | str:
        if isinstance(key, str):
            return self.counts[key]
        return str(self)[key]

    def keys(self) -> KeysView[str]:
        """The names of the figures."""
        return self.counts.keys()

    def values(self) -> ValuesView[Figure]:
        """The figures."""
        return self.counts.values()

    def items(self) -> ItemsView[str, Figure]:
        """The figures with their names."""
        return self.counts.items()

    def __reduce__(self) -> tuple[type[Summary], tuple[str, dict[str, Figure]]]:
        # Pickle (and copy) as text and figures: the mapping proxy cannot be pickled itself.
        return (type(self), (str(self), dict(self.counts)))
