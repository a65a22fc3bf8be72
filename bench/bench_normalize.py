"""Benchmark: normalizing List records, column-wise against a straightforward per-row conversion.

Generates N List records in the decided serialization (plain digits, ``For Sale``/``For Rent``,
JSON text for Images and ExtensionColumn, ``""`` when absent, LATITUDE/LONGITUDE as numbers), with
a few percent of the other accepted forms and a few unreadable values mixed in. Then, on the same
records:

* times :func:`normalize_records` against a per-row conversion (parse each field of each record
  with plain Python, build a frame from the list of dicts, conform it to the schema), and checks
  that both give the same frame;
* measures the peak memory of normalizing, the records already built, against the final frame's
  ``memory_usage(deep=True)``: with ``tracemalloc`` (Python and numpy allocations) and, since
  pyarrow allocates its string buffers out of ``tracemalloc``'s sight, as the growth of the
  process's resident memory during a separate call (sampled every millisecond, Linux only).

The timed calls come after the memory calls, so they run in a warmed-up process (as in a
notebook session); the first, cold call is slower.

Targets: at least 10x faster; peak memory below 4x the frame.

    python -m bench.bench_normalize              # 1,000,000 records
    python -m bench.bench_normalize --rows 20000 # a quick try
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from estatebot.listings import schema
from estatebot.listings.remote.normalize import NormalizeWarning, normalize_records

SPEED_TARGET = 10.0
MEMORY_TARGET = 4.0

# --------------------------------------------------------------------------- records

_CITIES = [
    ("Austin", "TX", "78701", 30.27, -97.74),
    ("Boston", "MA", "02134", 42.36, -71.06),
    ("Denver", "CO", "80202", 39.74, -104.99),
    ("Miami", "FL", "33101", 25.76, -80.19),
    ("Seattle", "WA", "98101", 47.61, -122.33),
]
_TYPES = ["Single Family", "Condo", "Townhouse", "Multi Family"]
_WORDS = [
    "bright",
    "open",
    "kitchen",
    "quiet",
    "street",
    "updated",
    "bath",
    "large",
    "yard",
    "near",
    "park",
    "schools",
]
_EXTENSIONS = [("Pool", ["Yes", "No"]), ("View", ["Lake", "City", "None"]), ("Basement", ["Yes"])]


def _money(value: int, rng: random.Random) -> str:
    # Mostly the decided plain digits; a few in the looser forms the client must accept.
    roll = rng.random()
    if roll < 0.03:
        return f"${value:,}.00"
    if roll < 0.04:
        return f"US$ {value:,}"
    return str(value)


def _record(i: int, rng: random.Random) -> dict[str, Any]:
    """One List record in the decided serialization, sometimes in another accepted form."""
    city, state, zip_code, lat, lon = rng.choice(_CITIES)
    rent = rng.random() < 0.3
    mls = f"MLS{i:08d}"
    area = rng.randint(500, 5000)
    sale_price = "" if rent else str(rng.randint(80, 2000) * 1000)
    rent_price = str(rng.randint(8, 60) * 100) if rent else ""
    images = [f"https://img.example.com/{mls}/{k}.jpg" for k in range(rng.randint(0, 6))]
    extension = [
        {"Key": key, "value": rng.choice(values)}
        for key, values in _EXTENSIONS
        if rng.random() < 0.5
    ]
    record: dict[str, Any] = {
        "ID": i + 1,
        "PropertyType": rng.choice(_TYPES),
        "SaleType": "For Rent" if rent else "For Sale",
        "Status": rng.choice(["Active", "Active", "PreOnMarket", "Sold"]),
        "Images": json.dumps(images, separators=(",", ":")) if images else "",
        "CurrencySymbol": "$",
        "Price": _money(int(rent_price or sale_price), rng),
        "State": state,
        "City": city,
        "Address": f"{rng.randint(1, 9999)} {rng.choice(_WORDS).title()} St",
        "ZIP": zip_code,
        "LATITUDE": round(lat + rng.uniform(-0.2, 0.2), 6),
        "LONGITUDE": round(lon + rng.uniform(-0.2, 0.2), 6),
        "Area": str(area),
        "Bathrooms": rng.choice(["1", "1.5", "2", "2.5", "3"]),
        "Bedrooms": str(rng.randint(0, 6)),
        "Url": f"https://homes.example.com/listing/{mls}",
        "Tours": rng.choice(["", "OpenHouse", "3D"]),
        "YearBuilt": str(rng.randint(1900, 2024)),
        "MLSNumber": mls,
        "DaysOnMarket": str(rng.randint(0, 400)),
        "LotArea": str(rng.randint(1000, 20000)),
        "BuildingArea": str(area),
        "ParkingSpots": str(rng.randint(0, 4)),
        "Description": " ".join(rng.choices(_WORDS, k=rng.randint(0, 30))),
        "ExtensionColumn": json.dumps(extension, separators=(",", ":")) if extension else "",
        "RentPrice": rent_price,
        "SpaceType": rng.choice(["Entire place", "Room"]) if rent else "",
        "DepositFee": rent_price,
        "SalePrice": sale_price,
        "UnitAreaPrice": str(round(int(sale_price) / area, 2)) if sale_price else "",
        "ZestimatePrice": "" if rent else _money(int(sale_price) + 5000, rng),
        "HOAMonth": rng.choice(["", "N/A", "150", "320.50"]),
    }
    roll = rng.random()
    if roll < 0.02:
        record["SaleType"] = rng.choice(["FOR RENT", " for  rent ", "for_rent"])
        record["SpaceType"], record["SalePrice"], record["ZestimatePrice"] = "Room", "", ""
        record["UnitAreaPrice"] = ""
    elif roll < 0.04:
        record["Images"] = ", ".join(images)
    elif roll < 0.06:
        record["ExtensionColumn"] = "; ".join(f"{e['Key']}: {e['value']}" for e in extension)
    elif roll < 0.07:
        record["Area"] = f"{area:,} sqft"
        record["BuildingArea"] = ""
    elif roll < 0.072:
        record["Bedrooms"] = rng.choice(["2.5", "three"])  # unreadable: NA and a problem
    return record


def make_records(rows: int, seed: int = 7) -> list[dict[str, Any]]:
    """``rows`` List records, reproducibly."""
    rng = random.Random(seed)
    return [_record(i, rng) for i in range(rows)]


# --------------------------------------------------------------------------- per-row baseline

_ABSENT = {"", "null", "none", "-", "n/a", "na", "nan"}
_DRESSING = re.compile(r"(?i)^(?:[a-z]{0,3}\$)?\s*([+-]?[\d.,]+)\s*(?:sqft)?$")
_SALE_TYPES = {"forsale": "for_sale", "forrent": "for_rent"}


def _py_number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    text = value.strip()
    if text.lower() in _ABSENT:
        return None
    try:
        return float(text)
    except ValueError:
        match = _DRESSING.match(text)
        if match is None:
            return None
        try:
            return float(match.group(1).replace(",", ""))
        except ValueError:
            return None


def _py_int(value: Any) -> int | None:
    number = _py_number(value)
    if number is None or number != int(number):
        return None
    return int(number)


def _py_text(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _py_enum(value: Any, allowed: Sequence[str]) -> str | None:
    text = _py_text(value)
    if text is None:
        return None
    folded = "".join(ch for ch in text.casefold() if ch.isalnum())
    for option in allowed:
        if "".join(ch for ch in option.casefold() if ch.isalnum()) == folded:
            return option
    return _SALE_TYPES.get(folded)


def _py_images(value: Any) -> list[str]:
    text = (value or "").strip()
    if not text:
        return []
    if text.startswith("["):
        return [str(url).strip() for url in json.loads(text) if str(url).strip()]
    return [part.strip() for part in re.split(r"[,|]", text) if part.strip()]


def _py_extensions(value: Any) -> dict[str, str]:
    text = (value or "").strip()
    if not text:
        return {}
    if text.startswith("["):
        return {item["Key"]: item.get("value", item.get("Value", "")) for item in json.loads(text)}
    pairs = (part.partition(":") for part in re.split(r"[;\n]", text) if part.strip())
    return {key.strip(): val.strip() for key, _, val in pairs}


def _py_area_unit(value: Any) -> str | None:
    """The unit an area written for people ends with ("2,669 sqft", "120 m²"), else None."""
    text = _py_text(value) if isinstance(value, str) else None
    if text is None:
        return None
    unit = text.lstrip("0123456789,. ").casefold().rstrip(".")
    if unit in {"sqft", "sq ft", "sq. ft", "sq feet", "square feet", "square foot", "sf", "ft²"}:
        return "Square Feet"
    if unit in {"sqm", "sq m", "sq. m", "square meters", "square metres", "m²", "m2"}:
        return "Square Meters"
    return None


def per_row_normalize(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The straightforward conversion: every field of every record with plain Python."""
    rows = []
    for record in records:
        row: dict[str, Any] = {}
        for column in schema.COLUMNS:
            source = {"Latitude": "LATITUDE", "Longitude": "LONGITUDE"}.get(column, column)
            value = record.get(source)
            if column in schema.INT_COLUMNS:
                row[column] = _py_int(value)
            elif column in schema.FLOAT_COLUMNS:
                row[column] = _py_number(value)
            elif column in schema.ENUM_VALUES:
                row[column] = _py_enum(value, schema.ENUM_VALUES[column])
            elif column == "Images":
                row[column] = _py_images(value)
            elif column == "ExtensionColumn":
                row[column] = _py_extensions(value)
            else:
                row[column] = _py_text(value)
        price = _py_number(record.get("Price"))
        target = {"for_sale": "SalePrice", "for_rent": "RentPrice"}.get(row["SaleType"] or "")
        if target and row[target] is None:
            row[target] = price
        if row["BuildingArea"] is None:
            row["BuildingArea"] = _py_number(record.get("Area"))
        if row["AreaUnit"] is None:
            row["AreaUnit"] = _py_area_unit(record.get("Area"))
        rows.append(row)
    return schema.conform(pd.DataFrame(rows, columns=list(schema.COLUMNS)))


# --------------------------------------------------------------------------- measuring


def _quiet_normalize(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalizeWarning)
        return normalize_records(records).frame


def _timed(function: Callable[[], pd.DataFrame]) -> tuple[float, pd.DataFrame]:
    gc.collect()
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


class _RssSampler:
    """The growth of the process's resident memory while running, sampled every millisecond.

    tracemalloc sees Python's and numpy's allocations only; pyarrow keeps string data in memory
    it allocates itself. Resident memory sees both.
    """

    def __init__(self) -> None:
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        self._start = self._resident()
        self._peak = self._start
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _resident(self) -> int:
        try:
            with open("/proc/self/statm") as statm:
                return int(statm.read().split()[1]) * self._page
        except OSError:
            return 0

    def _run(self) -> None:
        while not self._done.wait(0.001):
            self._peak = max(self._peak, self._resident())

    def __enter__(self) -> _RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self._peak = max(self._peak, self._resident())

    @property
    def growth(self) -> int:
        return self._peak - self._start


def _peak_memory(records: Sequence[dict[str, Any]]) -> tuple[int, int, pd.DataFrame]:
    """Peak bytes of normalizing ``records`` (already built): (resident growth, tracemalloc).

    Two calls: tracemalloc's own bookkeeping would inflate the resident figure.
    """
    gc.collect()
    with _RssSampler() as resident:
        frame = _quiet_normalize(records)
    del frame
    gc.collect()
    tracemalloc.start()
    frame = _quiet_normalize(records)
    _, python_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return resident.growth, python_peak, frame


def _mb(size: float) -> str:
    return f"{size / 2**20:,.1f} MB"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its result table; exit status 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000, help="records (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    print(f"generating {args.rows:,} List records ...", flush=True)
    records = make_records(args.rows, args.seed)
    # Imports, regex compilation and the like, once, outside every measurement.
    _quiet_normalize(records[:2000])
    per_row_normalize(records[:2000])

    print("measuring memory, then time ...", flush=True)
    resident_growth, python_peak, frame = _peak_memory(records)
    frame_bytes = int(frame.memory_usage(deep=True).sum())
    del frame
    fast_times = []
    for _ in range(2):
        elapsed, fast = _timed(lambda: _quiet_normalize(records))
        fast_times.append(elapsed)
    slow_time, slow = _timed(lambda: per_row_normalize(records))
    same = fast.equals(slow)
    differing = [c for c in schema.COLUMNS if not fast[c].equals(slow[c])]

    fast_time = min(fast_times)
    speedup = slow_time / fast_time
    python_ratio = python_peak / frame_bytes
    resident_ratio = resident_growth / frame_bytes
    rows = [
        ("records", f"{args.rows:,}", ""),
        (
            "normalize_records",
            f"{fast_time:8.2f} s",
            "best of 2 calls: " + ", ".join(f"{t:.2f} s" for t in fast_times),
        ),
        ("per-row Python", f"{slow_time:8.2f} s", ""),
        ("speed-up", f"{speedup:8.1f} x", f"target >= {SPEED_TARGET:g} x"),
        ("same frame", "yes" if same else "NO: " + ", ".join(differing), ""),
        ("final frame (deep)", _mb(frame_bytes), "memory_usage(deep=True)"),
        ("peak, tracemalloc", _mb(python_peak), f"{python_ratio:.2f} x frame (Python, numpy)"),
        ("peak, resident", _mb(resident_growth), f"{resident_ratio:.2f} x frame (also pyarrow)"),
    ]
    width = max(len(name) for name, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    print()
    for name, value, note in rows:
        print(f"  {name:<{width}}  {value:>{value_width}}  {note}".rstrip())
    memory_ok = max(python_ratio, resident_ratio) < MEMORY_TARGET
    print(
        f"\n  speed target {'met' if speedup >= SPEED_TARGET else 'MISSED'}, memory target "
        f"(< {MEMORY_TARGET:g} x frame) {'met' if memory_ok else 'MISSED'}"
    )
    return 0 if same and speedup >= SPEED_TARGET and memory_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
