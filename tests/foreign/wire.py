"""What goes over the wire: .NET naming, request binding and validation, List record texts.

Written from ``service-interface.md`` and ``addendum.md`` only. Bodies are bound the way an
ASP.NET model binder does it: names without case, JSON types checked (a number field takes a
JSON number, not text), unknown names ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from foreign.variant import Variant

# --------------------------------------------------------------------------- naming


def dotnet_camel(name: str) -> str:
    """``name`` as System.Text.Json's ``JsonNamingPolicy.CamelCase`` writes it.

    The leading run of capitals is lowered except the last one before a lower-case letter:
    ``SessionID`` → ``sessionID``, ``MLSNumber`` → ``mlsNumber``, ``ID`` → ``id``,
    ``HOAMonth`` → ``hoaMonth``.
    """
    if not name or not name[0].isupper():
        return name
    chars = list(name)
    for i, char in enumerate(chars):
        if i == 1 and not char.isupper():
            break
        has_next = i + 1 < len(chars)
        if i > 0 and has_next and not chars[i + 1].isupper():
            break
        chars[i] = char.lower()
    return "".join(chars)


def recase(value: Any) -> Any:
    """Every object key in ``value`` (recursively) in .NET camelCase; ``$``-names stay."""
    if isinstance(value, dict):
        return {
            (key if key.startswith("$") else dotnet_camel(key)): recase(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [recase(item) for item in value]
    return value


# --------------------------------------------------------------------------- binding


@dataclass
class Problems:
    """Validation problems by field (the shape of ASP.NET's ``ModelState`` errors)."""

    errors: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, message: str) -> None:
        """Record one problem of field ``name``."""
        self.errors.setdefault(name, []).append(message)

    def __bool__(self) -> bool:
        return bool(self.errors)


@dataclass(frozen=True)
class Rule:
    """One input field: its JSON kind, whether it is required, its allowed values or range."""

    kind: str  # "str", "int", "num", "bool", "strlist", "intlist", "ext"
    required: bool = False
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None


def bind(body: Mapping[str, Any], rules: Mapping[str, Rule], problems: Problems) -> dict[str, Any]:
    """The body's fields by the rules' names (matched without case), checked; None = absent."""
    by_lower = {str(key).lower(): value for key, value in body.items()}
    out: dict[str, Any] = {}
    for name, rule in rules.items():
        value = by_lower.get(name.lower())
        if value is None:
            if rule.required:
                problems.add(name, f"The {name} field is required.")
            continue
        checked = _check(name, value, rule, problems)
        if checked is not None:
            out[name] = checked
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check(name: str, value: Any, rule: Rule, problems: Problems) -> Any:
    kind = rule.kind
    if kind == "str":
        if not isinstance(value, str):
            problems.add(name, f"The JSON value could not be converted to System.String ({name}).")
            return None
        if rule.choices and value not in rule.choices:
            problems.add(name, f"{name} must be one of: {', '.join(rule.choices)}.")
            return None
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            problems.add(name, f"The JSON value could not be converted to System.Boolean ({name}).")
            return None
        return value
    if kind in ("int", "num"):
        if not _is_number(value) or (kind == "int" and float(value) != int(value)):
            target = "System.Int32" if kind == "int" else "System.Decimal"
            problems.add(name, f"The JSON value could not be converted to {target} ({name}).")
            return None
        if (rule.low is not None and value < rule.low) or (
            rule.high is not None and value > rule.high
        ):
            problems.add(name, f"The field {name} must be between {rule.low:g} and {rule.high:g}.")
            return None
        return int(value) if kind == "int" else value
    if kind in ("strlist", "intlist"):
        ok = isinstance(value, list) and all(
            isinstance(v, str) if kind == "strlist" else _is_number(v) for v in value
        )
        if not ok:
            problems.add(
                name,
                f"{name} must be an array of {'strings' if kind == 'strlist' else 'integers'}.",
            )
            return None
        return list(value)
    if kind == "ext":
        return _extension_items(name, value, problems)
    raise AssertionError(f"unknown rule kind {kind}")


def _extension_items(name: str, value: Any, problems: Problems) -> list[dict[str, str]] | None:
    if not isinstance(value, list):
        problems.add(name, f"{name} must be an array of objects with Key and value.")
        return None
    items: list[dict[str, str]] = []
    for item in value:
        fields = {str(k).lower(): v for k, v in item.items()} if isinstance(item, dict) else {}
        key, text = fields.get("key"), fields.get("value")
        if not isinstance(key, str) or not isinstance(text, str):
            problems.add(name, f"Each {name} element needs a string Key and a string value.")
            return None
        items.append({"Key": key, "value": text})
    return items


# --------------------------------------------------------------------------- operation rules

_S, _N, _I, _B = Rule("str"), Rule("num"), Rule("int"), Rule("bool")
_REQ_S, _REQ_N = Rule("str", required=True), Rule("num", required=True)

#: The listing input fields (Create; Update adds Key and KeyType). The YearBuilt range is this
#: deployment's own rule: the contract shows none, so a client cannot know it beforehand.
LISTING_RULES: dict[str, Rule] = {
    "SerialNumber": _REQ_S,
    "SaleType": Rule("str", True, ("for_sale", "for_rent")),
    "Status": Rule("str", True, ("Active", "PreOnMarket", "Sold")),
    "CurrencySymbol": _REQ_S,
    "PropertyType": _REQ_S,
    "Bedrooms": _REQ_N,
    "Bathrooms": _REQ_N,
    "Url": _REQ_S,
    "MLSNumber": _REQ_S,
    "YearBuilt": Rule("num", True, low=1600, high=2100),
    "DaysOnMarket": _REQ_N,
    "LotArea": _REQ_N,
    "BuildingArea": _REQ_N,
    "AreaUnit": Rule("str", True, ("Square Feet", "Square Meters")),
    "Images": Rule("strlist"),
    "Tours": Rule("str", choices=("OpenHouse", "3D")),
    "ParkingSpots": _REQ_N,
    "Description": _S,
    "ExtensionColumn": Rule("ext"),
    "Location": _S,
    "Address": _S,
    "City": _S,
    "State": _S,
    "ZIP": _S,
    "Latitude": _N,
    "Longitude": _N,
    "SalePrice": _N,
    "UnitAreaPrice": _N,
    "HOAMonth": _N,
    "ZestimatePrice": _N,
    "RentPrice": _N,
    "SpaceType": Rule("str", choices=("Entire place", "Room")),
    "DepositFee": _N,
}
KEY_TYPES = ("NewOaks", "MLSNumber", "URL")
UPDATE_RULES: dict[str, Rule] = {
    **LISTING_RULES,
    "Key": _REQ_S,
    "KeyType": Rule("str", True, KEY_TYPES),
}
LIST_RULES: dict[str, Rule] = {
    "SerialNumber": _REQ_S,
    "CityName": _S,
    "SaleType": Rule("str", choices=("for_sale", "for_rent")),
    "MLSNumber": _S,
    "PageNumber": Rule("int", low=1, high=2**31 - 1),
    "PageSize": Rule("int", low=1, high=2**31 - 1),
}
#: List of a deployment counting pages from 0.
ZERO_BASED_LIST_RULES: dict[str, Rule] = {
    **LIST_RULES,
    "PageNumber": Rule("int", low=0, high=2**31 - 1),
}
DELETE_RULES: dict[str, Rule] = {
    "SerialNumber": _REQ_S,
    "Keys": Rule("strlist", required=True),
    "KeyType": Rule("str", True, KEY_TYPES),
}
SESSION_RULES: dict[str, Rule] = {"serialNumber": _REQ_S}
ASK_RULES: dict[str, Rule] = {
    "sessionID": Rule("int", required=True),
    "content": _REQ_S,
    "chatAskType": Rule("str", choices=("Text", "Audio", "Image", "Video")),
    "stream": _B,
    "fileIds": Rule("intlist"),
}
#: Edit's fields. Temperature's and ChatBubbleAlign's ranges are this deployment's own rules
#: (the contract shows none); ``Model`` is checked against ModelList by the server.
EDIT_RULES: dict[str, Rule] = {
    "serialNumber": _REQ_S,
    **{
        name: _S
        for name in [
            "Name",
            "Model",
            "SystemMessage",
            "TimeZone",
            "AnswerSuffix",
            "ChatProfilePicture",
            "ChatIcon",
            "ChatBubbleColor",
            "ChatbotPrivacyPolicyDescription",
            "ChatbotPrivacyPolicyName",
            "ChatbotPrivacyPolicyUrl",
            "FacebookUrl",
            "InstagramUrl",
            "SuggestedMessage",
            "TalkToHumanEmail",
            "TalkToHumanResponseMessage",
            "UserInputPlaceholder",
            "UserMessageColor",
            "WelcomeMessage",
            "WhatsappUrl",
            "Domains",
            "RateLimitMessage",
            "CustomDomain",
            "EmailForDailyChatLogs",
            "EmailForDailyLeads",
            "AIResponseLanguage",
        ]
    },
    **{
        name: _B
        for name in [
            "ChatbotPopupOnce",
            "EnablePushToTalk",
            "EnableUploadImage",
            "RemoveChatLogOnBrowserClose",
            "VerifyDomain",
        ]
    },
    "Temperature": Rule("int", low=0, high=2),
    "ChatBubbleAlign": Rule("int", low=0, high=1),
    "RateLimitCount": Rule("int", low=0, high=2**31 - 1),
    "RateLimitTime": Rule("int", low=0, high=2**31 - 1),
    "MessageLimit": Rule("int", low=-1, high=2**31 - 1),
}

# --------------------------------------------------------------------------- List records

#: The fields of a List record, in the contract's order.
RECORD_FIELDS = (
    "ID", "PropertyType", "SaleType", "Status", "Images", "CurrencySymbol", "Price", "State",
    "City", "Address", "ZIP", "LATITUDE", "LONGITUDE", "Area", "Bathrooms", "Bedrooms", "Url",
    "Tours", "YearBuilt", "MLSNumber", "DaysOnMarket", "LotArea", "BuildingArea", "ParkingSpots",
    "Description", "ExtensionColumn", "RentPrice", "SpaceType", "DepositFee", "SalePrice",
    "UnitAreaPrice", "ZestimatePrice", "HOAMonth",
)  # fmt: skip
_TEXT_FIELDS = ("PropertyType", "Status", "CurrencySymbol", "State", "City", "Address", "ZIP")
_MORE_TEXT = ("Url", "Tours", "MLSNumber", "Description", "SpaceType")
_COUNTS = ("Bathrooms", "Bedrooms", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea")
_MONEY = ("RentPrice", "DepositFee", "SalePrice", "UnitAreaPrice", "ZestimatePrice", "HOAMonth")


def number_text(
    value: float | int | None, variant: Variant, *, money: bool = False, price: bool = False
) -> str:
    """A number as List writes it: plain digits by default, in the variant's style.

    ``decimal`` writes money with two decimals (``"450000.00"``); ``money`` does so too and
    writes ``Price`` with a currency symbol and separators (``"$450,000.00"``, as the addendum
    allows for ``Price``); ``money_everywhere`` writes every money field that way.
    """
    if value is None:
        return variant.absent
    style = variant.numbers
    if (price and style in ("money", "money_everywhere")) or (
        money and style == "money_everywhere"
    ):
        return f"${value:,.2f}"
    if (money or price) and style != "plain":
        return f"{value:.2f}"
    if float(value) == int(value):
        return str(int(value))
    return repr(float(value))


def _sale_text(sale_type: str, variant: Variant) -> str:
    if variant.sale_type_text == "input":
        return sale_type
    display = "For Sale" if sale_type == "for_sale" else "For Rent"
    return display.upper() if variant.sale_type_text == "upper" else display


def _images_text(images: list[str], variant: Variant) -> str:
    if not images:
        return ""
    if variant.images_text == "comma":
        return ", ".join(images)
    if variant.images_text == "pipe":
        return "|".join(images)
    if variant.images_text == "objects":
        objects = [{"Url": url, "Order": n} for n, url in enumerate(images, start=1)]
        return json.dumps(objects, separators=(",", ":"))
    return json.dumps(images, separators=(",", ":"))


def _extensions_text(items: list[dict[str, str]], variant: Variant) -> str:
    if not items:
        return ""
    if variant.extensions_text == "pairs":
        return "; ".join(f"{item['Key']}: {item['value']}" for item in items)
    if variant.extensions_text == "capital_value":
        items = [{"Key": item["Key"], "Value": item["value"]} for item in items]
    return json.dumps(items, separators=(",", ":"))


def list_record(listing_id: int, listing: Mapping[str, Any], variant: Variant) -> dict[str, Any]:
    """A stored listing as a List record: every value text, except ID and the coordinates."""
    record: dict[str, Any] = {"ID": listing_id}
    absent_text = None if variant.null_texts else ""
    for name in (*_TEXT_FIELDS, *_MORE_TEXT):
        value = listing.get(name)
        record[name] = absent_text if value is None else str(value)
    record["SaleType"] = _sale_text(listing["SaleType"], variant)
    record["Images"] = _images_text(listing.get("Images") or [], variant)
    record["ExtensionColumn"] = _extensions_text(listing.get("ExtensionColumn") or [], variant)
    record["LATITUDE"] = listing.get("Latitude")
    record["LONGITUDE"] = listing.get("Longitude")
    for name in (*_COUNTS, "ParkingSpots"):
        record[name] = number_text(listing.get(name), variant)
    for name in _MONEY:
        record[name] = number_text(listing.get(name), variant, money=True)
    price = listing.get("SalePrice" if listing["SaleType"] == "for_sale" else "RentPrice")
    record["Price"] = number_text(price, variant, price=True)
    area = listing.get("BuildingArea")
    if variant.numbers in ("money", "money_everywhere") and area is not None:
        unit = "sqft" if listing.get("AreaUnit") == "Square Feet" else "m²"
        record["Area"] = f"{area:,.0f} {unit}"
    else:
        record["Area"] = number_text(area, variant)
    for name in variant.decimal_comma:
        if isinstance(record.get(name), str):
            record[name] = record[name].replace(".", ",")
    return {name: record[name] for name in RECORD_FIELDS}
