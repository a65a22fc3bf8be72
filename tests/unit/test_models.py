"""The wire models: the contract's rules, aliases and the field-problem report."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from estatebot.api import models


def listing(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "SerialNumber": "3254a9d0424c4806b9ea3d0763ccf1bf",
        "SaleType": "for_sale",
        "Status": "Active",
        "CurrencySymbol": "$",
        "PropertyType": "Single Family",
        "Bedrooms": 3,
        "Bathrooms": 2.5,
        "Url": "https://homes.example/1",
        "MLSNumber": "ATX-1001",
        "YearBuilt": 1999,
        "DaysOnMarket": 12,
        "LotArea": 6000,
        "BuildingArea": 1850,
        "AreaUnit": "Square Feet",
        "ParkingSpots": 2,
    }
    body.update(overrides)
    return body


def problems_of(model: type[pydantic.BaseModel], data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(pydantic.ValidationError) as caught:
        model.model_validate(data)
    return {field: message for field, message, _ in models.field_problems(caught.value)}


def test_listing_keeps_ints_as_ints_and_leaves_out_unset_fields() -> None:
    wire = models.to_wire(models.ListingInput.model_validate(listing()))
    assert wire["Bedrooms"] == 3
    assert isinstance(wire["Bedrooms"], int)
    assert wire["Bathrooms"] == 2.5
    assert "SalePrice" not in wire
    assert "Images" not in wire


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("SaleType", "sale"),
        ("Status", "Pending"),
        ("AreaUnit", "sqft"),
        ("Tours", "Virtual"),
        ("SpaceType", "Garage"),
        ("Latitude", 91),
        ("Longitude", -181),
        ("Bedrooms", -1),
        ("SalePrice", -5),
    ],
)
def test_listing_rejects_bad_values_naming_the_field(field: str, value: Any) -> None:
    problems = problems_of(models.ListingInput, listing(**{field: value}))
    assert list(problems) == [field]


def test_every_missing_required_field_is_named_once() -> None:
    problems = problems_of(models.ListingUpdate, {"SerialNumber": "x"})
    expected = {*models.REQUIRED_LISTING_FIELDS, "Key", "KeyType"}
    assert set(problems) == expected
    assert all(message == "Field required" for message in problems.values())


def test_union_number_reports_one_problem_per_field_with_the_value() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        models.ListingInput.model_validate(listing(Bedrooms="three"))
    [(field, message, value)] = models.field_problems(caught.value)
    assert (field, value) == ("Bedrooms", "three")
    assert message.startswith("Input should be a valid integer")


def test_unknown_fields_are_refused_by_request_models() -> None:
    problems = problems_of(models.ListingInput, listing(Bedroms=3))
    assert "Bedroms" in problems


def test_extension_items_use_lower_case_value_on_the_wire() -> None:
    body = listing(ExtensionColumn=[{"Key": "Pool", "value": "Yes"}])
    wire = models.to_wire(models.ListingInput.model_validate(body))
    assert wire["ExtensionColumn"] == [{"Key": "Pool", "value": "Yes"}]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("ChatBubbleColor", "rgb(256,0,0)"),
        ("ChatBubbleColor", "#ff0000"),
        ("UserMessageColor", "rgb(1,2)"),
        ("TimeZone", "Mars/Olympus"),
        ("TimeZone", "UTC"),
        ("TalkToHumanEmail", "not-an-email"),
        ("EmailForDailyLeads", "a@"),
        ("FacebookUrl", "ftp://example.com/x"),
        ("WhatsappUrl", "not a url"),
        ("MessageLimit", -2),
        ("RateLimitCount", -1),
        ("Temperature", "warm"),
    ],
)
def test_chatbot_settings_rules(field: str, value: Any) -> None:
    problems = problems_of(models.ChatbotSettings, {"serialNumber": "abc", field: value})
    assert list(problems) == [field]


def test_chatbot_settings_accept_good_values_and_keep_url_text() -> None:
    settings = models.ChatbotSettings.model_validate(
        {
            "serialNumber": "abc",
            "ChatBubbleColor": "rgb(0, 128, 255)",
            "TimeZone": "America/New_York",
            "TalkToHumanEmail": "agent@realty.com",
            "FacebookUrl": "https://facebook.com/sunnyhomes",
            "MessageLimit": -1,
        }
    )
    wire = models.to_wire(settings)
    assert wire == {
        "serialNumber": "abc",
        "ChatBubbleColor": "rgb(0, 128, 255)",
        "TimeZone": "America/New_York",
        "TalkToHumanEmail": "agent@realty.com",
        "FacebookUrl": "https://facebook.com/sunnyhomes",
        "MessageLimit": -1,
    }


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ({"content": "hi", "fileIds": [1]}, "fileIds", "only allowed"),
        ({"content": "", "chatAskType": "Audio", "fileIds": [1, 2]}, "fileIds", "exactly one"),
        ({"content": "", "chatAskType": "Video", "fileIds": []}, "fileIds", "at least one"),
        ({"content": "  "}, "content", "must not be empty"),
        ({"content": "x", "chatAskType": "Smell"}, "chatAskType", "Text"),
    ],
)
def test_ask_rules_name_the_field(body: dict[str, Any], field: str, fragment: str) -> None:
    problems = problems_of(models.AskRequest, {"sessionID": 1, **body})
    assert list(problems) == [field]
    assert fragment in problems[field]


def test_ask_accepts_several_images_and_empty_content_for_media() -> None:
    ask = models.AskRequest.model_validate(
        {"sessionID": 7, "content": "", "chatAskType": "Image", "fileIds": [1, 2, 3]}
    )
    assert models.to_wire(ask) == {
        "sessionID": 7,
        "content": "",
        "chatAskType": "Image",
        "stream": False,
        "fileIds": [1, 2, 3],
    }


def test_answer_tolerates_a_missing_no_answer_and_unknown_fields() -> None:
    answer = models.Answer.model_validate(
        {"messageid": 375561, "content": "I'm here to help", "totalToken": 4337, "extra": 1}
    )
    assert answer.no_answer is False
    assert answer.message_id == 375561


def test_listing_page_keeps_raw_records_and_optional_count() -> None:
    page = models.ListingPage.model_validate({"List": [{"ID": 1, "Price": "$1,000"}]})
    assert page.records == [{"ID": 1, "Price": "$1,000"}]
    assert page.virtual_count is None


def test_delete_needs_at_least_one_non_empty_key() -> None:
    assert "Keys" in problems_of(
        models.DeleteRequest, {"SerialNumber": "s", "Keys": [], "KeyType": "URL"}
    )
    assert "Keys.0" in problems_of(
        models.DeleteRequest, {"SerialNumber": "s", "Keys": [""], "KeyType": "URL"}
    )
