"""The thin typed API layer: the only place that talks HTTP.

``Client`` and ``AsyncClient`` with their resources (``chatbots``, ``chat``, ``listings``), the
models of every request and response, the exception tree, and ``ServiceGate``: request limits
shared by many clients of one service.
"""

from estatebot import errors
from estatebot.api import models
from estatebot.api.chat import AsyncChatStream, ChatStream
from estatebot.api.client import AsyncClient, Client
from estatebot.api.gate import RequestGate, ServiceGate
from estatebot.api.models import (
    AIModel,
    Answer,
    AreaUnit,
    ChatAskType,
    ChatbotSettings,
    ExtensionItem,
    KeyType,
    ListingInput,
    ListingPage,
    ListingStatus,
    ListingUpdate,
    SaleType,
    SpaceType,
    StreamResult,
    Tours,
)
from estatebot.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    ConflictError,
    EstatebotError,
    FieldProblem,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
    RequestValidationError,
    ServerError,
)

__all__ = [
    "AIModel",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "Answer",
    "AreaUnit",
    "AsyncChatStream",
    "AsyncClient",
    "AuthenticationError",
    "ChatAskType",
    "ChatStream",
    "ChatbotSettings",
    "Client",
    "ConfigurationError",
    "ConflictError",
    "EstatebotError",
    "ExtensionItem",
    "FieldProblem",
    "InvalidRequestError",
    "KeyType",
    "ListingInput",
    "ListingPage",
    "ListingStatus",
    "ListingUpdate",
    "NotFoundError",
    "RateLimitError",
    "RequestGate",
    "RequestValidationError",
    "SaleType",
    "ServerError",
    "ServiceGate",
    "SpaceType",
    "StreamResult",
    "Tours",
    "errors",
    "models",
]
