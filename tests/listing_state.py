"""What a service holds, compared with what a test intends, field by field.

The everyday loop's tests (pull, edit, plan, apply) end by asking two questions of every listing:
does the service hold the intended value of each field, and did any field the edit did not touch
change? :func:`frame_differences` answers them over two pulled frames (by MLS number);
:func:`stored` and :func:`stored_differences` over the emulator's own records, which also hold
the fields List never returns (``AreaUnit``, ``Location``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pandas as pd

import estatebot as eb
from estatebot.emulator import EmulatorServer, running

#: Frame columns a pull cannot compare: List never returns them (they are compared in the store).
UNLISTED = ("AreaUnit", "Location")
#: The store's fields (a listing's Create body, less SerialNumber).
STORED_FIELDS = (
    "SaleType", "Status", "CurrencySymbol", "PropertyType", "Bedrooms", "Bathrooms", "Url",
    "MLSNumber", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea", "AreaUnit", "Images",
    "Tours", "ParkingSpots", "Description", "ExtensionColumn", "Location", "Address", "City",
    "State", "ZIP", "Latitude", "Longitude", "SalePrice", "UnitAreaPrice", "HOAMonth",
    "ZestimatePrice", "RentPrice", "SpaceType", "DepositFee",
)  # fmt: skip


@contextmanager
def service(seed: str | None = "demo") -> Iterator[tuple[EmulatorServer, eb.Client]]:
    """A fresh emulator (``seed``: "demo" is the 200-listing market, "small" 16 listings) and a
    client of it."""
    with (
        running(seed=seed) as server,
        eb.Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client,
    ):
        yield server, client


def pull(client: eb.Client, server: EmulatorServer) -> pd.DataFrame:
    """Every listing of the server's demo chatbot, as the loop's first step pulls them."""
    return eb.pull_listings(client, server.serial, progress=False)


def is_blank(value: Any) -> bool:
    """No value: None, NA, NaN, empty text, an empty list or dict."""
    if value is None or value is pd.NA:
        return True
    if isinstance(value, str | list | dict | tuple):
        return len(value) == 0
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _plain(value: Any) -> Any:
    """A stored ExtensionColumn (``[{"Key": k, "value": v}]``) as a dict; others as they are."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return {item.get("Key"): item.get("value") for item in value}
    return value


def same_value(a: Any, b: Any, *, rel: float = 1e-9) -> bool:
    """Equal as listing values: both blank, numbers within ``rel``, or equal."""
    a, b = _plain(a), _plain(b)
    if is_blank(a) or is_blank(b):
        return is_blank(a) and is_blank(b)
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-9)
    return bool(a == b)


def frame_differences(
    expected: pd.DataFrame,
    actual: pd.DataFrame,
    *,
    skip: Collection[str] = (),
    allow: Callable[[str, str, Any], bool] | None = None,
) -> list[str]:
    """Every way ``actual`` differs from ``expected`` (both pulled frames), by MLS number:
    listings missing or extra, and each field that differs (``"KEY.Field: expected X, got Y"``).

    Columns in :data:`UNLISTED` and ``skip`` are not compared. ``allow(key, field, got)`` may
    accept a value that is not the expected one (a unit price computed from an edited price).
    """
    want = expected.set_index("MLSNumber")
    have = actual.set_index("MLSNumber")
    problems = [f"{key}: missing" for key in want.index.difference(have.index)]
    problems += [f"{key}: not expected" for key in have.index.difference(want.index)]
    assert want.index.is_unique, "expected frame has duplicate MLS numbers"
    assert have.index.is_unique, "the service holds duplicate MLS numbers"
    columns = [c for c in want.columns if c not in (*UNLISTED, *skip) and c in have.columns]
    for key in want.index.intersection(have.index):
        for column in columns:
            w, h = want.at[key, column], have.at[key, column]
            if same_value(w, h) or (allow is not None and allow(str(key), column, h)):
                continue
            problems.append(f"{key}.{column}: expected {w!r}, got {h!r}")
    return problems


def stored(server: EmulatorServer, ids: Collection[int]) -> dict[str, dict[str, Any]]:
    """The emulator's own records of the listings ``ids``, by MLS number (every input field,
    those List never returns included)."""
    data = server.store.listing_data(server.serial, [int(i) for i in ids])
    return {str(record["MLSNumber"]): dict(record) for record in data.values()}


def stored_differences(
    expected: Mapping[str, Mapping[str, Any]],
    actual: Mapping[str, Mapping[str, Any]],
    *,
    fields: Collection[str] = STORED_FIELDS,
    allow: Callable[[str, str, Any], bool] | None = None,
) -> list[str]:
    """Every way the stored records ``actual`` differ from ``expected``, by MLS number and
    field (a missing key and a blank value are the same)."""
    problems = [f"{key}: missing" for key in sorted(set(expected) - set(actual))]
    problems += [f"{key}: not expected" for key in sorted(set(actual) - set(expected))]
    for key in sorted(set(expected) & set(actual)):
        for name in fields:
            w, h = expected[key].get(name), actual[key].get(name)
            if same_value(w, h) or (allow is not None and allow(key, name, h)):
                continue
            problems.append(f"{key}.{name}: expected {w!r}, got {h!r} (stored)")
    return problems


def unit_price_of(record: Mapping[str, Any]) -> float | None:
    """The unit price a listing's own price and building area give (None without both)."""
    price = record.get("SalePrice")
    if is_blank(price):
        price = record.get("RentPrice")
    area = record.get("BuildingArea")
    if is_blank(price) or is_blank(area) or not float(area):
        return None
    return float(price) / float(area)


def near(value: Any, target: float | None, *, rel: float = 0.01) -> bool:
    """``value`` is a number within ``rel`` of ``target``, or equal to it rounded to cents."""
    if target is None or is_blank(value):
        return False
    return math.isclose(float(value), target, rel_tol=rel, abs_tol=0.006)
