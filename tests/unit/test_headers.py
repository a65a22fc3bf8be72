"""Header matching: the alias table, normalization, user mappings and conflicts."""

from __future__ import annotations

import pytest

from estatebot.errors import SheetError
from estatebot.listings.schema import COLUMNS
from estatebot.listings.sheet.fields import headers as h


def _sources(names: list[str], **kwargs: object) -> dict[str, str | None]:
    return {m.header: m.source for m in h.match_headers(names, **kwargs)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "source"),
    [
        ("MLS#", "MLSNumber"),
        ("MLS #", "MLSNumber"),
        ("ML #", "MLSNumber"),
        ("List Number", "MLSNumber"),
        ("mls_id", "MLSNumber"),
        ("ListingId", "MLSNumber"),
        ("  listing id ", "MLSNumber"),
        ("BEDS", "Bedrooms"),
        ("Tot BR", "Bedrooms"),
        ("# Bedrooms", "Bedrooms"),
        ("BedroomsTotal", "Bedrooms"),
        ("BATHS", "Bathrooms"),
        ("full_baths", "BathroomsFull"),
        ("half_baths", "BathroomsHalf"),
        ("SQUARE FEET", "BuildingAreaSquareFeet"),
        ("$/SQUARE FEET", "UnitAreaPrice"),
        ("Price/SqFt", "UnitAreaPrice"),
        ("HOA/MONTH", "HOAMonth"),
        ("LOT SIZE", "LotSize"),
        ("Approx Lot Acres", "LotSizeAcres"),
        ("ZIP OR POSTAL CODE", "ZIP"),
        ("PostalCode", "ZIP"),
        ("StateOrProvince", "State"),
        ("Geo Lat", "Latitude"),
        ("PublicRemarks", "Description"),
        ("ParkingTotal", "ParkingSpots"),
        ("parking_garage", "GarageSpaces"),
        ("PRICE", "ListPrice"),
        ("Sold Price", "ClosePrice"),
        ("listing_type", "SaleType"),
        ("URL (SEE https://www.redfin.com/buy-a-home FOR INFO ON PRICING)", "Url"),
        ("NEXT OPEN HOUSE START TIME", "OpenHouse"),
        ("OpenHouseStartTime", "OpenHouse"),
        ("VirtualTourURLUnbranded", "VirtualTour"),
        ("ListingKey", "ListingKey"),
    ],
)
def test_known_headers_feed_their_source(header: str, source: str) -> None:
    assert h.match_header(header) is not None
    assert h.match_header(header)[0] == source  # type: ignore[index]


def test_every_api_field_name_matches_itself() -> None:
    for column in COLUMNS:
        found = h.match_header(column)
        assert found == (column, "api name"), column


def test_normalization_ignores_case_spaces_and_punctuation_but_keeps_symbols() -> None:
    assert h.normalize_header(" Mls_Number ") == h.normalize_header("MLS #")
    assert h.normalize_header("Bedrooms-Total") == h.normalize_header("bedrooms total")
    assert h.normalize_header("$/SQUARE FEET") != h.normalize_header("SQUARE FEET")
    # A plain "mls" column (the MLS's name in some exports) is not the MLS number.
    assert h.normalize_header("mls") != h.normalize_header("MLS#")
    assert h.match_header("mls") is None


def test_portal_sale_type_column_is_an_extension_not_sale_type() -> None:
    assert h.match_header("SALE TYPE") == (None, "extension")
    assert h.match_header("sale  type") == (None, "extension")
    assert h.match_header("SaleType") == ("SaleType", "api name")


def test_how_reports_the_spelling_that_matched() -> None:
    matches = {m.header: m.how for m in h.match_headers(["MLS#", "BedroomsTotal", "City", "x"])}
    assert matches == {
        "MLS#": "common export",
        "BedroomsTotal": "reso",
        "City": "api name",
        "x": "extension",
    }


def test_private_agent_fields_are_ignored_never_extended() -> None:
    matches = h.match_headers(["PrivateRemarks", "ShowingInstructions", "Heating"])
    assert [(m.source, m.how) for m in matches] == [
        (None, "ignored"),
        (None, "ignored"),
        (None, "extension"),
    ]


def test_unknown_headers_are_ignored_when_extensions_are_off() -> None:
    matches = h.match_headers(["Heating", "SALE TYPE"], extensions=False)
    assert [m.how for m in matches] == ["ignored", "ignored"]


def test_user_mapping_wins_over_the_table() -> None:
    matches = h.match_headers(
        ["BEDS", "Beds (total)", "Full", "Notes", "Junk"],
        {
            "BEDS": "ignore",
            "Beds (total)": "BedroomsTotal",
            "Full": "BathroomsFull",
            "notes": "ExtensionColumn",
            "Junk": "ignore",
        },
    )
    assert [(m.source, m.how) for m in matches] == [
        (None, "ignored"),
        ("Bedrooms", "user mapping"),
        ("BathroomsFull", "user mapping"),
        (None, "extension"),
        (None, "ignored"),
    ]


def test_mapping_to_an_unknown_field_raises() -> None:
    with pytest.raises(SheetError, match="unknown field 'Bedroomz'") as info:
        h.match_headers(["BEDS"], {"BEDS": "Bedroomz"})
    assert info.value.column == "BEDS"


def test_two_headers_for_one_field_raise_naming_both() -> None:
    with pytest.raises(SheetError, match="'BEDS' and 'BedroomsTotal'"):
        h.match_headers(["BEDS", "BedroomsTotal"])
    with pytest.raises(SheetError, match="'Tot BR' and 'Bedrooms'"):
        h.match_headers(["Tot BR", "Baths", "Bedrooms"], {"Baths": "Bathrooms"})


def test_a_mapping_resolves_a_conflict() -> None:
    matches = h.match_headers(["BEDS", "BedroomsTotal"], {"BEDS": "ExtensionColumn"})
    assert [(m.source, m.how) for m in matches] == [
        (None, "extension"),
        ("Bedrooms", "reso"),
    ]


def test_several_open_house_columns_may_feed_tours() -> None:
    matches = h.match_headers(["NEXT OPEN HOUSE START TIME", "NEXT OPEN HOUSE END TIME"])
    assert [m.field for m in matches] == ["Tours", "Tours"]


def test_unmatched_mapping_keys_are_reported() -> None:
    assert h.unmatched_mapping_keys(["BEDS"], {"beds": "Bedrooms", "Nope": "City"}) == ["Nope"]


def test_alias_table_is_consistent() -> None:
    # Every alias resolves to the source it is listed under (no spelling means two things).
    for source, (reso, common) in h.ALIASES.items():
        assert source in h.SOURCES
        for alias in (*reso, *common):
            found = h.match_header(alias)
            assert found is not None, alias
            assert found[0] == source, alias
    for source in h.SOURCES.values():
        assert source.field is None or source.field in COLUMNS
