"""The I/O-free parts of the API client: configuration, headers, replies, retry policy, paging."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import tenacity

from estatebot import errors
from estatebot.api import _base, _config, _responses, _retry
from estatebot.api._redact import RedactingFilter, redact, register_secret
from estatebot.api.listings import update_body

API_KEY = "unit-api-key-5f1c"
SESSION_KEY = "unit-session-key-9a2e"


def envelope(
    data: Any = None, *, success: bool = True, code: int = 200, message: str = ""
) -> bytes:
    body = {"Data": data, "Version": "1.0.0", "Success": success, "Code": code, "Message": message}
    return json.dumps(body).encode()


def config(**overrides: Any) -> _config.ClientConfig:
    args: dict[str, Any] = {
        "base_url": "http://svc.test/",
        "api_key": API_KEY,
        "session_key": SESSION_KEY,
        "timeout": 5.0,
    }
    return _config.ClientConfig.from_args(**{**args, **overrides})


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (_config.ENV_BASE_URL, _config.ENV_API_KEY, _config.ENV_SESSION_KEY):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- configuration


def test_config_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_config.ENV_BASE_URL, "http://env.test:8080/")
    monkeypatch.setenv(_config.ENV_API_KEY, "env-api")
    cfg = _config.ClientConfig.from_args(base_url=None, api_key=None, session_key=None, timeout=3)
    assert cfg.base_url == "http://env.test:8080"
    assert cfg.api_key is not None
    assert cfg.api_key.get_secret_value() == "env-api"
    assert cfg.session_key is None


def test_config_defaults_to_production_host() -> None:
    cfg = _config.ClientConfig.from_args(base_url=None, api_key=None, session_key=None, timeout=3)
    assert cfg.base_url == "https://usapi.hottask.com"


def test_config_rejects_a_base_url_that_is_not_http() -> None:
    with pytest.raises(errors.ConfigurationError, match="ESTATEBOT_BASE_URL"):
        config(base_url="ftp://x")


def test_describe_never_shows_a_key() -> None:
    text = config(session_key=None).describe("Client")
    assert text == "Client(base_url='http://svc.test', api_key=set, session_key=not set)"
    assert API_KEY not in repr(config())


@pytest.mark.parametrize(
    ("operation", "expected"),
    [
        (_base.EDIT, {"Authorization"}),
        (_base.CLIENT_ASK, {"Authorization"}),
        (_base.GET_SESSION, {"Authorization"}),
        (_base.MODEL_LIST, {"Authorization"}),
        (_base.LIST, {"chatrobot-sessionkey"}),
        (_base.UPDATE, {"Authorization", "chatrobot-sessionkey"}),
        (_base.DELETE, {"Authorization", "chatrobot-sessionkey"}),
        (_base.CREATE, {"Authorization", "chatrobot-sessionkey"}),
    ],
)
def test_credential_headers_per_operation(operation: _base.Operation, expected: set[str]) -> None:
    headers = config().headers_for(operation)
    assert {"Authorization", "chatrobot-sessionkey"} & set(headers) == expected
    if "Authorization" in headers:
        assert headers["Authorization"] == API_KEY  # the raw key, no "Bearer "


def test_either_key_operations_send_the_one_configured() -> None:
    only_session = config(api_key=None).headers_for(_base.DELETE)
    assert only_session["chatrobot-sessionkey"] == SESSION_KEY
    assert "Authorization" not in only_session
    only_api = config(session_key=None).headers_for(_base.UPDATE)
    assert only_api["Authorization"] == API_KEY
    assert "chatrobot-sessionkey" not in only_api


@pytest.mark.parametrize(
    ("operation", "missing", "variable"),
    [
        (_base.LIST, "session_key", "ESTATEBOT_SESSION_KEY"),
        (_base.EDIT, "api_key", "ESTATEBOT_API_KEY"),
        (_base.CLIENT_ASK, "api_key", "ESTATEBOT_API_KEY"),
    ],
)
def test_missing_credential_names_the_variable(
    operation: _base.Operation, missing: str, variable: str
) -> None:
    with pytest.raises(errors.ConfigurationError, match=variable) as info:
        config(**{missing: None}).headers_for(operation)
    assert operation.name in str(info.value)


def test_either_key_operation_without_any_key_names_both_variables() -> None:
    with pytest.raises(errors.ConfigurationError) as info:
        config(api_key=None, session_key=None).headers_for(_base.UPDATE)
    assert "ESTATEBOT_API_KEY" in str(info.value)
    assert "ESTATEBOT_SESSION_KEY" in str(info.value)


def test_request_args_add_stream_flag_and_default_timeout() -> None:
    call = _base.Call(_base.CLIENT_ASK, {"sessionID": 1, "content": "hi"}, _base.parse_int)
    args = config().request_args(call, stream=True)
    assert args["url"] == "http://svc.test/chat/Chat/ClientAsk"
    assert args["json"] == {"sessionID": 1, "content": "hi", "stream": True}
    assert args["timeout"] == 5.0
    assert args["headers"]["Content-Type"] == "application/json"


def test_model_list_is_a_get_without_body_or_content_type() -> None:
    call = _base.Call(_base.MODEL_LIST, None, list, timeout=1.5)
    args = config().request_args(call)
    assert args["method"] == "GET"
    assert args["json"] is None
    assert args["timeout"] == 1.5
    assert "Content-Type" not in args["headers"]


# --------------------------------------------------------------------------- replies


def test_success_envelope_gives_data() -> None:
    assert _responses.parse_response(_base.EDIT, 200, {}, envelope(1)) == 1


def test_envelope_without_success_field_is_judged_by_code() -> None:
    body = json.dumps({"Data": 7, "Code": 200}).encode()
    assert _responses.parse_response(_base.EDIT, 200, {}, body) == 7


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, errors.InvalidRequestError),
        (401, errors.AuthenticationError),
        (403, errors.AuthenticationError),
        (404, errors.NotFoundError),
        (409, errors.ConflictError),
        (429, errors.RateLimitError),
        (500, errors.ServerError),
        (503, errors.ServerError),
        (418, errors.APIError),
    ],
)
def test_http_status_maps_to_error_class(status: int, cls: type[errors.APIError]) -> None:
    body = envelope(None, success=False, code=status, message="Name: too long")
    with pytest.raises(cls) as info:
        _responses.parse_response(_base.EDIT, status, {}, body)
    err = info.value
    assert type(err) is cls
    assert (err.status_code, err.code, err.message, err.operation) == (
        status,
        status,
        "Name: too long",
        "Edit",
    )


def test_success_false_with_http_200_maps_by_code() -> None:
    body = envelope(None, success=False, code=404, message="no such chatbot")
    with pytest.raises(errors.NotFoundError) as info:
        _responses.parse_response(_base.EDIT, 200, {}, body)
    assert info.value.status_code == 200
    assert info.value.code == 404
    assert "Code 404" in str(info.value)


def test_success_false_with_code_200_is_a_plain_api_error() -> None:
    with pytest.raises(errors.APIError) as info:
        _responses.parse_response(
            _base.EDIT, 200, {}, envelope(None, success=False, message="nope")
        )
    assert type(info.value) is errors.APIError
    assert info.value.message == "nope"


def test_non_json_error_body_gets_a_message_from_the_status() -> None:
    with pytest.raises(errors.ServerError) as info:
        _responses.parse_response(_base.LIST, 502, {}, b"<html>Bad gateway</html>")
    assert info.value.message == "HTTP 502 Bad Gateway"
    assert info.value.code is None


def test_non_json_success_body_is_an_api_error() -> None:
    with pytest.raises(errors.APIError, match="not a JSON envelope"):
        _responses.parse_response(_base.LIST, 200, {}, b"ok")


def test_rate_limit_error_carries_retry_after_and_message() -> None:
    body = envelope(None, success=False, code=429, message="Slow down, please")
    with pytest.raises(errors.RateLimitError) as info:
        _responses.parse_response(_base.CLIENT_ASK, 429, {"retry-after": "7"}, body)
    assert info.value.retry_after == 7.0
    assert info.value.message == "Slow down, please"


def test_error_message_quoting_a_key_is_redacted() -> None:
    register_secret(API_KEY)
    body = envelope(None, success=False, code=401, message=f"bad key {API_KEY}")
    with pytest.raises(errors.AuthenticationError) as info:
        _responses.parse_response(_base.EDIT, 401, {}, body)
    assert API_KEY not in str(info.value)


def test_parse_data_wraps_unexpected_shapes() -> None:
    call = _base.Call(_base.EDIT, {}, _base.parse_int)
    with pytest.raises(errors.APIError, match="unexpected Data"):
        _responses.parse_data(call, {"not": "an int"}, 200)
    assert _responses.parse_data(call, "1", 200) == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", 3.0),
        ("0.25", 0.25),
        ("-4", 0.0),
        ("Wed, 21 Oct 2015 07:28:10 GMT", 10.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    now = datetime(2015, 10, 21, 7, 28, 0, tzinfo=UTC)
    assert _responses.parse_retry_after(value, now=now) == expected


def test_transport_errors_map_to_connection_and_timeout_errors() -> None:
    timeout = _responses.transport_error(_base.LIST, httpx.ReadTimeout("slow"))
    assert isinstance(timeout, errors.APITimeoutError)
    refused = _responses.transport_error(_base.LIST, httpx.ConnectError("refused"))
    assert type(refused) is errors.APIConnectionError
    broke = _responses.transport_error(_base.CLIENT_ASK, httpx.ReadError("reset"), mid_stream=True)
    assert "stream broke off" in str(broke)


# --------------------------------------------------------------------------- retry policy


def _connection_error(cause: Exception) -> errors.APIConnectionError:
    try:
        raise errors.APIConnectionError("x", operation="op") from cause
    except errors.APIConnectionError as exc:
        return exc


POLICY = _retry.RetryPolicy(max_retries=2, backoff_base=0.1, backoff_max=1.0, max_retry_after=5)


@pytest.mark.parametrize(
    ("exc", "for_list", "for_ask"),
    [
        (_connection_error(httpx.ConnectError("refused")), True, True),
        (_connection_error(httpx.ConnectTimeout("slow")), True, True),
        (_connection_error(httpx.RemoteProtocolError("dropped")), True, False),
        (_connection_error(httpx.ReadTimeout("slow")), True, False),
        (errors.ServerError("x", operation="op", code=500, status_code=500), True, False),
        (errors.RateLimitError("x", operation="op", code=429, status_code=429), True, False),
        (errors.APIError("x", operation="op", code=408, status_code=408), True, False),
        (errors.APIError("x", operation="op", code=503, status_code=200), True, True),
        (errors.InvalidRequestError("x", operation="op", code=400, status_code=400), False, False),
        (errors.NotFoundError("x", operation="op", code=404, status_code=404), False, False),
        (ValueError("bug"), False, False),
    ],
)
def test_should_retry(exc: BaseException, for_list: bool, for_ask: bool) -> None:
    assert POLICY.should_retry(_base.LIST, exc) is for_list
    assert POLICY.should_retry(_base.CLIENT_ASK, exc) is for_ask


def _state(exc: BaseException, attempt: int = 1) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(tenacity.Retrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_wait_honours_retry_after_capped() -> None:
    limited = errors.RateLimitError("x", operation="op", retry_after=2.5)
    assert POLICY.wait_seconds(_state(limited)) == 2.5
    long = errors.RateLimitError("x", operation="op", retry_after=3600)
    assert POLICY.wait_seconds(_state(long)) == 5


def test_wait_backs_off_exponentially_with_jitter_up_to_the_cap() -> None:
    server = errors.ServerError("x", operation="op")
    first = POLICY.wait_seconds(_state(server, 1))
    assert 0.1 <= first <= 0.2
    assert 0.4 <= POLICY.wait_seconds(_state(server, 3)) <= 0.5
    assert POLICY.wait_seconds(_state(server, 10)) == 1.0


def test_operation_table_marks_client_ask_and_create_unsafe_to_resend() -> None:
    # A chat message would be answered twice, a listing made twice on a deployment that does
    # not refuse duplicates (sync law 8). A delete is idempotent: resent, its count is read
    # from the answers, never summed. A 429 or 503 says nothing was done: every operation but a
    # chat message (whose rate limit the panel counts down) waits and tries again.
    unsafe = [op.name for op in _base.OPERATIONS.values() if not op.retry_after_send]
    assert unsafe == ["ClientAsk", "RealEstateCreate"]
    throttled = [op.name for op in _base.OPERATIONS.values() if op.retry_throttled]
    assert throttled == [op for op in _base.OPERATIONS if op != "ClientAsk"]


# --------------------------------------------------------------------------- update keys

LISTING = {"SerialNumber": "abc", "MLSNumber": "MLS-1", "Url": "https://x.test/1"}


def test_update_key_defaults_to_the_mls_number() -> None:
    body = update_body(LISTING, None, None)
    assert (body["Key"], body["KeyType"]) == ("MLS-1", "MLSNumber")


def test_update_key_from_url_for_url_key_type() -> None:
    body = update_body(LISTING, None, "URL")
    assert (body["Key"], body["KeyType"]) == ("https://x.test/1", "URL")


def test_update_keeps_the_bodys_own_key_unless_overridden() -> None:
    own = {**LISTING, "Key": "42", "KeyType": "NewOaks"}
    assert update_body(own, None, None)["Key"] == "42"
    assert update_body(own, None, "MLSNumber")["Key"] == "MLS-1"
    assert update_body(own, "43", None)["Key"] == "43"


def test_update_new_oaks_needs_an_explicit_key() -> None:
    with pytest.raises(errors.RequestValidationError) as info:
        update_body(LISTING, None, "NewOaks")
    assert info.value.fields == ["Key"]
    assert update_body(LISTING, "99", "NewOaks")["Key"] == "99"


# --------------------------------------------------------------------------- redaction


def test_redact_masks_header_values_and_registered_secrets() -> None:
    register_secret("s3cr3t-value")
    text = "headers={'Authorization': 'abc123', 'chatrobot-sessionkey': 'def456'} s3cr3t-value"
    cleaned = redact(text)
    for secret in ("abc123", "def456", "s3cr3t-value"):
        assert secret not in cleaned
    assert "Authorization" in cleaned
    raw = redact("[(b'chatrobot-sessionkey', b'zzz999'), (b'authorization', b'yyy888')]")
    assert "zzz999" not in raw
    assert "yyy888" not in raw


def test_filter_rewrites_message_with_arguments() -> None:
    register_secret("arg-secret-1")
    record = logging.LogRecord("httpx", logging.DEBUG, __file__, 1, "k=%s", ("arg-secret-1",), None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "k=[redacted]"
