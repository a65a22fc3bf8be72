"""Pydantic models of every request and response of the service, with the wire names as aliases.

These models are the single statement of the contract's shapes and rules: the client validates
every call with them before sending, and the emulator validates every body it receives with them.

Conventions:

* Request models forbid unknown fields (a typo is an error, not a silently ignored setting);
  response models ignore unknown fields (the service may add some).
* Listing fields keep their wire names as Python names (`MLSNumber`, `SalePrice`), so a row
  of the canonical listing frame maps to an Update body with no renaming. Other models use
  Python names with the wire name as alias (`session_id` ↔ `sessionID`).
* Serialize requests with `to_wire`, which uses the aliases and leaves out unset fields.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    EmailStr,
    Field,
    HttpUrl,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from estatebot.api._reading import TolerantResponse, keys_without_case

API_VERSION = "1.0.0"


# --------------------------------------------------------------------------- enums


class KeyType(StrEnum):
    """How a listing `Key` is interpreted."""

    NEW_OAKS = "NewOaks"
    MLS_NUMBER = "MLSNumber"
    URL = "URL"


class SaleType(StrEnum):
    """Whether a listing is for sale or for rent (input values)."""

    FOR_SALE = "for_sale"
    FOR_RENT = "for_rent"


class ListingStatus(StrEnum):
    """A listing's market status."""

    ACTIVE = "Active"
    PRE_ON_MARKET = "PreOnMarket"
    SOLD = "Sold"


class AreaUnit(StrEnum):
    """The unit of LotArea and BuildingArea."""

    SQUARE_FEET = "Square Feet"
    SQUARE_METERS = "Square Meters"


class Tours(StrEnum):
    """The kind of tour a listing offers."""

    OPEN_HOUSE = "OpenHouse"
    THREE_D = "3D"


class SpaceType(StrEnum):
    """For rentals: the whole place or a room."""

    ENTIRE_PLACE = "Entire place"
    ROOM = "Room"


class ChatAskType(StrEnum):
    """The kind of a chat message."""

    TEXT = "Text"
    AUDIO = "Audio"
    IMAGE = "Image"
    VIDEO = "Video"


# --------------------------------------------------------------------------- field rules

_RGB = re.compile(r"^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$")
_HTTP_URL: TypeAdapter[HttpUrl] = TypeAdapter(HttpUrl)


def _check_rgb(value: str) -> str:
    match = _RGB.match(value)
    if match is None or any(int(part) > 255 for part in match.groups()):
        raise ValueError("must be a colour in rgb(r,g,b) form with parts from 0 to 255")
    return value


def _check_time_zone(value: str) -> str:
    if "/" not in value:
        raise ValueError("must be an IANA time zone in region/city form, e.g. America/Chicago")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError("is not a known IANA time zone (region/city form)") from None
    return value


def _check_http_url(value: str) -> str:
    # Validate with pydantic's URL type but keep the caller's exact text (HttpUrl would
    # normalize it, for example by adding a trailing slash).
    url = _HTTP_URL.validate_python(value)
    if url.scheme not in ("http", "https"):
        raise ValueError("must be an http or https URL")
    return value


RgbColor = Annotated[str, AfterValidator(_check_rgb)]
TimeZoneName = Annotated[str, AfterValidator(_check_time_zone)]
WebUrl = Annotated[str, AfterValidator(_check_http_url)]
NonNegative = Annotated[int | float, Field(ge=0)]


# Listing fields carry the same names as their enum types (``Tours: Tours``); these aliases keep
# the annotations resolvable inside class bodies where the field name shadows the type.
_KeyType = KeyType
_SaleType = SaleType
_AreaUnit = AreaUnit
_Tours = Tours
_SpaceType = SpaceType


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_enum_values=True)


class _Response(TolerantResponse):
    """A reply's model: names matched without case, a bare `Data` where one is plausible."""


def to_wire(model: BaseModel) -> dict[str, Any]:
    """A request model as the JSON body the service expects: wire names, unset fields left out.

    Args:
        model: A request model (`ListingInput`, `ChatbotSettings`, ...).

    Returns:
        The body as JSON-ready values by wire name, fields that are None left out.
    """
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# pydantic names union members in an error's location ("Bedrooms.int", "x.function-after[...]").
_UNION_TAG = re.compile(r"^(int|float|str|bool|none|[\w-]+\[.*\])$")
_FIELD_PREFIX = re.compile(r"^(?:Value error, )?(\w+): (.*)$", re.DOTALL)


def field_problems(error: ValidationError) -> list[tuple[str, str, Any]]:
    """Each problem of a validation error as `(field, message, value)`, field by wire name.

    Whole-model rules (such as the ClientAsk file rules) name their field at the start of their
    message, `"fileIds: ..."`; that name is lifted out so every problem names a field.

    Args:
        error: The error a request model raised.

    Returns:
        One `(field, message, value)` per field, in the order pydantic reports them (the first
            problem of a field only); the value is None for a missing field.
    """
    problems: list[tuple[str, str, Any]] = []
    seen: set[str] = set()  # kept between problems: a body with 100,000 bad items stays linear
    for item in error.errors(include_url=False):
        loc = [str(part) for part in item["loc"]]
        message = str(item["msg"])
        value = None if item["type"] == "missing" else item.get("input")
        if loc:
            # Union members add their type name to loc ("Bedrooms.int"): keep the field path only.
            field = ".".join(part for part in loc if not _UNION_TAG.match(part)) or loc[0]
        else:
            match = _FIELD_PREFIX.match(message)
            field, message = (match.group(1), match.group(2)) if match else ("body", message)
            if isinstance(value, dict):
                value = value.get(field)
        message = message.removeprefix("Value error, ")
        # A union reports once per member ("not an int", "not a float"): keep the first.
        if field not in seen:
            seen.add(field)
            problems.append((field, message, value))
    return problems


# --------------------------------------------------------------------------- envelope


class Envelope(_Response):
    """The common reply of every non-streaming operation.

    Some ASP.NET deployments (the ABP framework) wrap replies as `{"result": ..., "success":
    true, "error": null}`: with no `Data` (in any case), `Result` is read as `Data`, and
    with no `Message`, the `message` and `details` of an `error` object as `Message`.
    A reply holding both `Data` and `Result` keeps `Data`.
    """

    data: Any = Field(default=None, alias="Data")
    version: str | None = Field(default=None, alias="Version")
    #: None when the reply does not say: then ``Code`` tells (see ``_responses``).
    success: bool | None = Field(default=None, alias="Success")
    code: int | None = Field(default=None, alias="Code")
    message: str = Field(default="", alias="Message")

    @model_validator(mode="before")
    @classmethod
    def _abp_wrapping(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        by_name: dict[str, Any] = {}
        for key in data:
            by_name.setdefault(str(key).lower(), key)
        added: dict[str, Any] = {}
        if "data" not in by_name and "result" in by_name:
            added["Data"] = data[by_name["result"]]
        error = data.get(by_name["error"]) if "error" in by_name else None
        if "message" not in by_name and isinstance(error, dict):
            added["Message"] = _abp_error_message(error)
        return {**data, **added} if added else data

    @field_validator("message", mode="before")
    @classmethod
    def _null_message(cls, value: Any) -> Any:
        # .NET services write "Message": null on success.
        return "" if value is None else value


def _abp_error_message(error: dict[str, Any]) -> str:
    """The text of an ABP `error` object: its `message`, then its `details`."""
    fields = {str(key).lower(): value for key, value in error.items()}
    texts = [str(fields[name]).strip() for name in ("message", "details") if fields.get(name)]
    return ": ".join(text for text in texts if text)


# --------------------------------------------------------------------------- chatbots


class ChatbotSettings(_Request):
    """The body of Edit: the chatbot ID and the settings to change (omitted ones stay unchanged)."""

    serial_number: str = Field(alias="serialNumber", min_length=1)
    Name: str | None = None
    Model: str | None = None
    SystemMessage: str | None = None
    Temperature: int | None = None
    TimeZone: TimeZoneName | None = None
    AnswerSuffix: str | None = None
    ChatProfilePicture: str | None = None
    ChatIcon: str | None = None
    ChatBubbleAlign: int | None = None
    ChatBubbleColor: RgbColor | None = None
    ChatbotPopupOnce: bool | None = None
    ChatbotPrivacyPolicyDescription: str | None = None
    ChatbotPrivacyPolicyName: str | None = None
    ChatbotPrivacyPolicyUrl: WebUrl | None = None
    EnablePushToTalk: bool | None = None
    EnableUploadImage: bool | None = None
    FacebookUrl: WebUrl | None = None
    InstagramUrl: WebUrl | None = None
    RemoveChatLogOnBrowserClose: bool | None = None
    SuggestedMessage: str | None = None
    TalkToHumanEmail: EmailStr | None = None
    TalkToHumanResponseMessage: str | None = None
    UserInputPlaceholder: str | None = None
    UserMessageColor: RgbColor | None = None
    WelcomeMessage: str | None = None
    WhatsappUrl: WebUrl | None = None
    VerifyDomain: bool | None = None
    Domains: str | None = None
    RateLimitCount: int | None = Field(default=None, ge=0)
    RateLimitMessage: str | None = None
    RateLimitTime: int | None = Field(default=None, ge=0)
    CustomDomain: str | None = None
    EmailForDailyChatLogs: EmailStr | None = None
    EmailForDailyLeads: EmailStr | None = None
    AIResponseLanguage: str | None = None
    MessageLimit: int | None = Field(default=None, ge=-1)


#: The names of the settings Edit accepts, besides ``serialNumber``.
CHATBOT_SETTING_NAMES: tuple[str, ...] = tuple(
    name for name in ChatbotSettings.model_fields if name != "serial_number"
)


class AIModel(_Response):
    """One entry of ModelList; Edit's `Model` takes its `key`.

    Attributes:
        key: The model's key (`Key` on the wire), what Edit's `Model` takes.
        name: The model's name (`Value` on the wire).
        enabled: Whether the model is on offer (`Status` on the wire; True when missing).
    """

    key: str = Field(alias="Key")
    name: str = Field(alias="Value")
    enabled: bool = Field(default=True, alias="Status")


# --------------------------------------------------------------------------- chat


class SessionRequest(_Request):
    """The body of GetSession."""

    serial_number: str = Field(alias="serialNumber", min_length=1)


class SessionData(_Response):
    """The `Data` of GetSession."""

    session_id: int = Field(alias="SessionID")

    @classmethod
    def from_bare(cls, value: Any) -> dict[str, Any] | None:
        """A session ID sent as `Data` itself.

        Args:
            value: The reply's `Data`.

        Returns:
            The fields of the model when `value` is an integer (or text holding one), else
                None.
        """
        return {"SessionID": value} if _is_integer(value) else None


class AskRequest(_Request):
    """The body of ClientAsk, with the contract's rules on content and files."""

    session_id: int = Field(alias="sessionID")
    content: str
    ask_type: ChatAskType | None = Field(default=None, alias="chatAskType")
    stream: bool = False
    file_ids: list[int] | None = Field(default=None, alias="fileIds")

    @model_validator(mode="after")
    def _check_files(self) -> AskRequest:
        kind = self.ask_type or ChatAskType.TEXT
        files = self.file_ids or []
        if kind == ChatAskType.TEXT:
            if files:
                raise ValueError("fileIds: only allowed when chatAskType is Image, Audio or Video")
            if not self.content.strip():
                raise ValueError("content: must not be empty for a Text message")
        elif not files:
            raise ValueError(f"fileIds: {kind} messages need at least one file ID")
        elif kind in (ChatAskType.AUDIO, ChatAskType.VIDEO) and len(files) != 1:
            raise ValueError(f"fileIds: {kind} messages take exactly one file, got {len(files)}")
        return self


class Answer(_Response):
    """The `Data` of a non-streaming ClientAsk.

    Attributes:
        message_id: The ID of the answer message (`messageid` on the wire).
        content: The answer's text.
        total_tokens: The tokens consumed (`totalToken`; 0 when the reply did not say).
        no_answer: Whether the AI had no answer (`noAnswer`; False when the reply did not say).
    """

    message_id: int = Field(alias="messageid")
    content: str
    total_tokens: int = Field(default=0, alias="totalToken")
    no_answer: bool = Field(default=False, alias="noAnswer")


class StreamResult(_Response):
    """The outcome of a streamed ClientAsk: its final object, or its fragments if cut short.

    Attributes:
        question_id: The message ID of the question (`QuestionID`), or None when not said.
        answer_id: The message ID of the answer (`AnswerID`), or None when not said.
        answer: The complete answer (`Answer`, else the fragments joined), or the fragments
            seen when cut short.
        total_tokens: The tokens consumed (`TotalToken`), or None when not said.
        no_answer: Whether the AI had no answer (`noAnswer`), or None when not said.
        complete: False when the stream ended before its final object.
    """

    question_id: int | None = Field(default=None, alias="QuestionID")
    answer_id: int | None = Field(default=None, alias="AnswerID")
    answer: str = Field(default="", alias="Answer")
    total_tokens: int | None = Field(default=None, alias="TotalToken")
    no_answer: bool | None = Field(default=None, alias="noAnswer")
    complete: bool = True


# --------------------------------------------------------------------------- listings


class ExtensionItem(_Request):
    """One extra key/value of a listing (note the lower-case `value` on the wire)."""

    Key: str
    value: str


class ListingInput(_Request):
    """The body of RealEstateCreate: a listing's fields, with the contract's required flags."""

    SerialNumber: str = Field(min_length=1)
    SaleType: _SaleType
    Status: ListingStatus
    CurrencySymbol: str = Field(min_length=1)
    PropertyType: str = Field(min_length=1)
    Bedrooms: NonNegative
    Bathrooms: NonNegative
    Url: str
    MLSNumber: str
    YearBuilt: int | float
    DaysOnMarket: NonNegative
    LotArea: NonNegative
    BuildingArea: NonNegative
    AreaUnit: _AreaUnit
    Images: list[str] | None = None
    Tours: _Tours | None = None
    ParkingSpots: NonNegative
    Description: str | None = None
    ExtensionColumn: list[ExtensionItem] | None = None
    Location: str | None = None
    Address: str | None = None
    City: str | None = None
    State: str | None = None
    ZIP: str | None = None
    Latitude: float | None = Field(default=None, ge=-90, le=90)
    Longitude: float | None = Field(default=None, ge=-180, le=180)
    SalePrice: NonNegative | None = None
    UnitAreaPrice: NonNegative | None = None
    HOAMonth: NonNegative | None = None
    ZestimatePrice: NonNegative | None = None
    RentPrice: NonNegative | None = None
    SpaceType: _SpaceType | None = None
    DepositFee: NonNegative | None = None


class ListingUpdate(ListingInput):
    """The body of RealEstateUpdate: a listing plus the key that finds it."""

    Key: str = Field(min_length=1)
    KeyType: _KeyType


#: Listing field names in the contract's order (the Update body less SerialNumber, Key, KeyType).
LISTING_FIELDS: tuple[str, ...] = tuple(
    name for name in ListingInput.model_fields if name != "SerialNumber"
)
#: The listing fields the contract marks required.
REQUIRED_LISTING_FIELDS: tuple[str, ...] = tuple(
    name
    for name, info in ListingInput.model_fields.items()
    if info.is_required() and name != "SerialNumber"
)


class ListRequest(_Request):
    """The body of RealEstateList."""

    SerialNumber: str = Field(min_length=1)
    CityName: str | None = None
    SaleType: _SaleType | None = None
    MLSNumber: str | None = None
    # 0 too: a deployment that counts pages from 0 keeps its first page there (the pager asks
    # page 0 once when the listings come up short of the count).
    PageNumber: int = Field(default=1, ge=0)
    PageSize: int = Field(default=20, ge=1)


class ListingPage(_Response):
    """The `Data` of RealEstateList.

    `records` are kept as the raw wire dicts: List returns every value as text in several
    serializations, and turning them into typed values is the listings layer's job
    (`estatebot.listings.remote.normalize`). `virtual_count` is the total number of listings
    matching the filters, or None when the service did not say.
    """

    records: list[dict[str, Any]] = Field(alias="List")
    virtual_count: int | None = Field(default=None, alias="VirtualCount")

    @field_validator("records", mode="wrap")
    @classmethod
    def _record_names(
        cls, value: Any, handler: ValidatorFunctionWrapHandler
    ) -> list[dict[str, Any]]:
        # A page fresh from the JSON reader is a list of objects (whose keys JSON makes text),
        # taken as it is: validating it copied every record key by key, a tenth of a pull's
        # work per page. Anything else is validated, and refused, as the annotation says.
        plain = type(value) is list and all(type(record) is dict for record in value)
        records: list[dict[str, Any]] = value if plain else handler(value)
        # Each record's fields by the contract's spelling, whatever the casing sent
        # ("mlsNumber", "latitude"): most pages already use it, which one look settles.
        if not records or set(records[0]) <= _RECORD_NAME_SET:
            return records
        return [keys_without_case(record, _RECORD_NAMES) for record in records]


class DeleteRequest(_Request):
    """The body of RealEstateDelete."""

    SerialNumber: str = Field(min_length=1)
    Keys: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    KeyType: _KeyType


class DeleteResult(_Response):
    """The `Data` of RealEstateDelete."""

    success_count: int = Field(alias="SuccessCount")

    @classmethod
    def from_bare(cls, value: Any) -> dict[str, Any] | None:
        """The count sent as `Data` itself.

        Args:
            value: The reply's `Data`.

        Returns:
            The fields of the model when `value` is an integer (or text holding one), else
                None.
        """
        return {"SuccessCount": value} if _is_integer(value) else None


#: Field names of a List record, as the service returns them.
LIST_RECORD_FIELDS: tuple[str, ...] = (
    "ID", "PropertyType", "SaleType", "Status", "Images", "CurrencySymbol", "Price", "State",
    "City", "Address", "ZIP", "LATITUDE", "LONGITUDE", "Area", "Bathrooms", "Bedrooms", "Url",
    "Tours", "YearBuilt", "MLSNumber", "DaysOnMarket", "LotArea", "BuildingArea", "ParkingSpots",
    "Description", "ExtensionColumn", "RentPrice", "SpaceType", "DepositFee", "SalePrice",
    "UnitAreaPrice", "ZestimatePrice", "HOAMonth",
)  # fmt: skip
_RECORD_NAME_SET = frozenset(LIST_RECORD_FIELDS)
_RECORD_NAMES = {name.lower(): name for name in LIST_RECORD_FIELDS}


def _is_integer(value: Any) -> bool:
    """An integer, or text that holds one (`"123"`): a plausible bare `Data`."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.strip().lstrip("-").isdigit()
