"""Write the whole sample set: the exports, the chat tests, the README and the demo seed.

:func:`generate` writes, into one folder, the week-1 market in the three header styles, the
week-2 market in the RESO style, optionally the pitfalls file, ``chat_tests.xlsx`` (questions
whose expectations hold for the demo chatbot holding the week-1 market) and a README saying what
each file is. With ``demo_seed`` it also writes the emulator's demo listings: the Create bodies
of the week-1 RESO export *as the reader reads it*, so that planning that export against a fresh
demo emulator finds nothing to do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from .market import AS_OF, Change, is_published, market, next_week
from .pitfalls import Pitfall, write_pitfalls
from .styles import (
    READ_OPTIONS,
    write_mls_system_xlsx,
    write_portal_csv,
    write_reso_xlsx,
    write_xlsx,
)

__all__ = [
    "CHAT_TEST_COLUMNS",
    "FILES",
    "Generated",
    "chat_cases",
    "generate",
    "write_demo_seed",
]

#: The files :func:`generate` writes, by role.
FILES: dict[str, str] = {
    "reso": "mls_export.xlsx",
    "reso_week2": "mls_export_week2.xlsx",
    "portal": "portal_export.csv",
    "mls_system": "mls_system_export.xlsx",
    "pitfalls": "mls_export_pitfalls.xlsx",
    "chat_tests": "chat_tests.xlsx",
    "readme": "README.md",
}

#: The columns of ``chat_tests.xlsx``.
CHAT_TEST_COLUMNS: tuple[str, ...] = (
    "name", "conversation", "question", "expect_contains", "expect_not_contains", "expect_regex",
    "expect_no_answer", "max_latency_ms", "max_tokens", "expect_grounded",
)  # fmt: skip


@dataclass
class Generated:
    """What :func:`generate` wrote, and the data behind it (for tests)."""

    files: dict[str, Path]
    week1: list[dict[str, Any]]
    week2: list[dict[str, Any]]
    changes: list[Change]
    pitfalls: list[Pitfall] = field(default_factory=list)


def generate(
    out: str | PathLike[str],
    seed: int = 42,
    n: int = 200,
    *,
    pitfalls: bool = False,
    demo_seed: str | PathLike[str] | None = None,
) -> Generated:
    """Write the sample files for ``seed`` into ``out`` (created if needed).

    ``pitfalls`` adds ``mls_export_pitfalls.xlsx``; ``demo_seed`` is a path where the demo
    listings JSON is written too.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    week1 = market(seed, n)
    week2, changes = next_week(week1, seed)
    files = {
        "reso": write_reso_xlsx(week1, folder / FILES["reso"]),
        "reso_week2": write_reso_xlsx(week2, folder / FILES["reso_week2"]),
        "portal": write_portal_csv(week1, folder / FILES["portal"]),
        "mls_system": write_mls_system_xlsx(week1, folder / FILES["mls_system"]),
    }
    found: list[Pitfall] = []
    if pitfalls:
        found = write_pitfalls(week1, folder / FILES["pitfalls"], seed=seed)
        files["pitfalls"] = folder / FILES["pitfalls"]
    cases = chat_cases(week1)
    files["chat_tests"] = write_xlsx(
        folder / FILES["chat_tests"],
        CHAT_TEST_COLUMNS,
        [[case.get(c) for c in CHAT_TEST_COLUMNS] for case in cases],
        title="cases",
        widths=lambda header: 60 if header in ("question", "expect_regex") else 24,
    )
    generated = Generated(files, week1, week2, changes, found)
    if demo_seed is not None:
        files["demo_seed"] = write_demo_seed(files["reso"], demo_seed)
    readme = folder / FILES["readme"]
    readme.write_text(_readme(generated, seed, n, cases), encoding="utf-8")
    files["readme"] = readme
    return generated


# --------------------------------------------------------------------------- the demo seed


def write_demo_seed(export: str | PathLike[str], path: str | PathLike[str]) -> Path:
    """Read a RESO export with the reader and write its listings as a seed file: a JSON list
    of Create bodies (without SerialNumber), one listing per line."""
    # Imported here: the listings layer is only needed for the seed, not for the exports.
    from estatebot.listings.remote.bodies import to_create_bodies
    from estatebot.listings.sheet.read import read_sheet

    sheet = read_sheet(export, **READ_OPTIONS["reso"])
    if len(sheet.errors):
        raise ValueError(f"{export} has rows the reader rejects:\n{sheet.summary()}")
    bodies = [
        body.model_dump(mode="json", exclude_none=True, exclude={"SerialNumber"})
        for body in to_create_bodies(sheet.frame, serial="demo")
    ]
    lines = ",\n".join(json.dumps(body, ensure_ascii=False) for body in bodies)
    target = Path(path)
    target.write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    return target


# --------------------------------------------------------------------------- chat tests


def _price(record: Mapping[str, Any]) -> float:
    return float(record["RentPrice" if record["SaleType"] == "for_rent" else "SalePrice"])


def _count(
    records: Sequence[Mapping[str, Any]],
    *,
    city: str | None = None,
    sale_type: str | None = None,
    beds: int | None = None,
    min_beds: int | None = None,
    low: float | None = None,
    high: float | None = None,
    property_type: str | None = None,
    sold: bool = False,
) -> int:
    """How many listings the demo chatbot should find for these criteria (sold ones only
    when asked for)."""
    return sum(
        1
        for r in records
        if is_published(r)
        and (r["Status"] == "Sold") == sold
        and (city is None or r["City"] == city)
        and (sale_type is None or r["SaleType"] == sale_type)
        and (beds is None or r["Bedrooms"] == beds)
        and (min_beds is None or r["Bedrooms"] >= min_beds)
        and (low is None or _price(r) >= low)
        and (high is None or _price(r) <= high)
        and (property_type is None or r["PropertyType"] == property_type)
    )


def _found(count: int) -> str:
    return rf"I found {count} listings?\b"


def _finds(count: int, **more: str) -> dict[str, str]:
    """Expectations for a search finding ``count`` listings (none: a polite non-answer)."""
    if count == 0:
        return {"expect_no_answer": "true", "expect_contains": "don't have listings matching"}
    return {"expect_regex": _found(count), **more}


def _money(value: float) -> str:
    return f"${value:,.0f}"


def _busiest(records: Sequence[Mapping[str, Any]], **criteria: Any) -> tuple[str, int]:
    """The city with the most listings meeting ``criteria``, and that number."""
    counts = Counter(
        {
            city: _count(records, city=city, **criteria)
            for city in sorted({r["City"] for r in records})
        }
    )
    city, count = max(counts.items(), key=lambda item: (item[1], item[0]))
    return city, count


def chat_cases(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """About twenty chat test cases whose expectations hold for a chatbot holding ``records``.

    Expected counts are computed here from the records, independently of the answer engine,
    so the cases check what the chatbot finds, not only how it words it.
    """
    cases: list[dict[str, Any]] = []

    def case(name: str, question: str, **expect: Any) -> None:
        # Every answer that lists homes must state only what the listings say.
        if "expect_regex" in expect and "expect_no_answer" not in expect:
            expect = {**expect, "expect_grounded": "true"}
        cases.append({"name": name, "question": question, **expect})

    sale = "for_sale"
    rent = "for_rent"
    case("greeting", "Hi there!", expect_contains="welcome to Sunny Homes",
         expect_no_answer="false")  # fmt: skip
    city, count = _busiest(records, sale_type=sale, beds=3, high=600_000)
    case("three-bed-budget", f"3 bedroom homes for sale in {city} under $600k",
         **_finds(count, expect_contains=city, expect_not_contains="/month"))  # fmt: skip
    city, count = _busiest(records, sale_type=rent)
    case("rentals-in-city", f"Any rentals in {city}?",
         **_finds(count, expect_contains=f"/month|{city}"))  # fmt: skip
    listing = next(r for r in records if r["Status"] == "Active" and r["SaleType"] == sale)
    case("mls-lookup", f"Tell me about MLS# {listing['MLSNumber']}",
         expect_contains=f"{listing['Address']}|{_money(listing['SalePrice'])}|"
         f"MLS# {listing['MLSNumber']}", expect_regex=_found(1))  # fmt: skip
    city, count = _busiest(records, sale_type=sale, sold=True)
    case("sold-homes", f"Which homes sold in {city}?",
         **_finds(count, expect_contains="Sold"))  # fmt: skip
    city, count = _busiest(records, sale_type=sale, property_type="Condominium")
    case("condos-for-sale", f"Condominiums for sale in {city}",
         **_finds(count, expect_contains="Condominium",
                  expect_not_contains="Townhouse|/month"))  # fmt: skip
    city, count = _busiest(records, property_type="Townhouse")
    case("townhouses", f"Townhouses in {city}",
         **_finds(count, expect_contains="Townhouse"))  # fmt: skip
    city, count = _busiest(records, sale_type=rent, beds=0)
    case("studios-for-rent", f"Studio rentals in {city}",
         **_finds(count, expect_contains="0 bd"))  # fmt: skip
    city, count = _busiest(records, sale_type=sale, low=250_000, high=400_000)
    case("price-range", f"Homes for sale in {city} between $250k and $400k",
         **_finds(count, expect_contains="priced from $250,000 to $400,000"))  # fmt: skip
    city, count = _busiest(records, sale_type=sale, min_beds=4)
    case("four-plus-beds", f"4+ bedroom homes for sale in {city}",
         **_finds(count, expect_contains="with at least 4 bedrooms"))  # fmt: skip
    city, count = _busiest(records, sale_type=rent, beds=2, high=3_500)
    case("rent-budget", f"2 bedroom places in {city} under $3,500/month",
         **_finds(count, expect_contains="/month"))  # fmt: skip
    case("off-topic", "What's the weather like tomorrow?", expect_no_answer="true",
         expect_contains="I'm sorry")  # fmt: skip
    case("no-match", "10 bedroom homes in Boston", expect_no_answer="true",
         expect_contains="don't have listings matching")  # fmt: skip
    city, _ = _busiest(records, sale_type=sale)
    case("sale-only", f"Homes for sale in {city}", expect_regex=r"\$\d{1,3}(,\d{3})+",
         expect_not_contains="/month|Sold", max_latency_ms="2000")  # fmt: skip
    city, count = _busiest(records, sale_type=rent, beds=1)
    case("token-budget", f"Any 1 bedroom rentals in {city}?", max_tokens="800",
         **_finds(count))  # fmt: skip
    case("thanks", "Thanks for your help!", expect_contains="You're welcome",
         expect_no_answer="false")  # fmt: skip

    city, count = _busiest(records, sale_type=rent, high=4_000)
    for name, question, expect in (
        ("chat-hello", "Hello", {"expect_contains": "Sunny Homes"}),
        ("chat-rentals", f"What rentals do you have in {city} under $4,000 a month?",
         {**_finds(count, expect_contains="/month"), "expect_grounded": "true"}),
        ("chat-thanks", "Thanks, that helps!", {"expect_contains": "You're welcome"}),
    ):  # fmt: skip
        cases.append({"name": name, "conversation": "renting", "question": question, **expect})
    return cases


# --------------------------------------------------------------------------- README


def _readme(generated: Generated, seed: int, n: int, cases: Sequence[Mapping[str, Any]]) -> str:
    week1 = generated.week1
    kinds = Counter(change.kind for change in generated.changes)
    rent = sum(1 for r in week1 if r["SaleType"] == "for_rent")
    for_sale = sum(1 for r in week1 if r["SaleType"] == "for_sale")
    cities = ", ".join(sorted({f"{r['City']} {r['State']}" for r in week1}))
    updates = kinds["price"] + kinds["field"] + kinds["sold"]
    lines = [
        "# Sample data",
        "",
        f"A sample market of {n} listings (seed {seed}, as of {AS_OF:%B} {AS_OF.day}, "
        f"{AS_OF.year}) in {cities}: {for_sale} for sale, {rent} for rent, at real ZIP codes. "
        "Generated by `estatebot.sample`; the same seed always gives the same files.",
        "",
        "| File | What it holds |",
        "|---|---|",
        f"| `{FILES['reso']}` | the week-1 market, RESO Data Dictionary headers (`ListingId`, "
        "`StandardStatus`, `BathroomsFull`, ...); `PostalCode` is a number formatted `00000` in "
        "every other row; `Pool` and `View` are extra columns |",
        f"| `{FILES['reso_week2']}` | the same market a week later, same style: "
        f"{kinds['price']} price changes, {kinds['field']} other changes, {kinds['sold']} sold, "
        f"{kinds['new']} new, {kinds['unpublished']} withdrawn or expired; days on market +7 |",
        f"| `{FILES['portal']}` | the week-1 homes for sale as a portal's CSV download (`PRICE`, "
        "`BEDS`, `MLS#`, ...), with the portal's disclaimer line as the first data row |",
        f"| `{FILES['mls_system']}` | the week-1 market as an MLS system's export (`ML #`, "
        "`Tot BR`, `Approx SQFT`, ...) with one- or two-letter status codes |",
    ]
    if generated.pitfalls:
        rows = len({p.row for p in generated.pitfalls})
        lines.append(
            f"| `{FILES['pitfalls']}` | 40 week-1 listings, RESO style, with {rows} spoiled rows: "
            "a disclaimer line, MLS numbers Excel turned into numbers, a ZIP without its leading "
            "zero, stray and non-breaking spaces, numbers as text, `#N/A` and blank cells, a "
            "duplicated key, an unknown status |"
        )
    lines += [
        f"| `{FILES['chat_tests']}` | {len(cases)} chat test cases (one 3-turn conversation) "
        "that pass against the emulator's demo chatbot; those listing homes are also "
        "fact-checked against its listings (`expect_grounded`) |",
        "",
        "Read them with `estatebot.read_sheet`. RESO and MLS-system exports carry no currency, "
        'so pass `defaults={"CurrencySymbol": "$"}`; the portal download also has no parking '
        'column and a lot size without a unit: `defaults={"CurrencySymbol": "$", '
        '"ParkingSpots": 0, "LotArea": 0}, lot_unit="sqft"` (`estatebot.sample.READ_OPTIONS` '
        "holds these per style). Defaults fill only what a listing lacks: on a listing already "
        "on the service they change nothing, and a new one gets them. Each style words some "
        "values its own way (the portal's `Single Family Residential` and `Contingent` for "
        "RESO's `Single Family Residence` and `Active Under Contract`): a plan of one style "
        "against listings synced from another shows those words as changes, and the extra "
        "columns only one style has are added to ExtensionColumn, never taken away.",
        "",
        'The emulator\'s demo chatbot (`running(seed="demo")`) holds the week-1 market exactly '
        f"as the reader reads `{FILES['reso']}`, so a plan of that file finds nothing to do and "
        f"a plan of `{FILES['reso_week2']}` finds {kinds['new']} creates, {updates} updates "
        f"and {kinds['unpublished']} deletes.",
        "",
        "Regenerate everything (the files here and the demo seed) with:",
        "",
        "```",
        f"python -m estatebot.sample --out sample_data --seed {seed} --pitfalls \\",
        "    --demo-seed src/estatebot/emulator/demo_listings.json",
        "```",
        "",
    ]
    return "\n".join(lines)
