"""Chat: ``ask``, ``stream`` and ``run_chat_tests`` against the stream framings and reply shapes
the addendum says a client must accept, and a few more a .NET deployment plausibly sends.

The server answers from the chatbot's listings ("I found 3 listings in Boston. For example MLS
F000002 at ..."), with a non-ASCII dash so that a split multi-byte character would show.
"""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest

import estatebot as eb
from foreign.helpers import aclient_for
from foreign.server import ForeignServer
from foreign.variant import CLIENT_ASK, EDIT, FinalStyle, Framing, Throttle, Variant

QUESTION = "Any homes in Boston?"


def _boston_mls(server: ForeignServer) -> str:
    return next(str(item["MLSNumber"]) for item in server.listings() if item["City"] == "Boston")


def _last_answer_id(server: ForeignServer) -> int:
    # The server numbers a question and its answer in pairs: the answer has the larger ID.
    return server.store._next_message - 1


# --------------------------------------------------------------------------- ask


ASKS: dict[str, Variant] = {
    "contract-keys": Variant(),
    "pascal-keys": Variant(ask_keys="pascal"),
    "camel-keys": Variant(ask_keys="camel"),
    "camel-envelope": Variant(camel_case=True),
    "camel-envelope-pascal-data": Variant(camel_case=True, ask_keys="pascal"),
    "bom-gzip-code-text": Variant(bom=True, gzip=True, code_text=True),
}


@pytest.mark.parametrize("server", list(ASKS.values()), ids=list(ASKS), indirect=True)
def test_ask_reads_the_answer(server: ForeignServer, client: eb.Client) -> None:
    """A grounded answer: content naming a Boston listing, its message ID, tokens, noAnswer."""
    server.seed(8)
    session = client.chat.create_session(server.serial)
    answer = client.chat.ask(session, QUESTION)
    assert _boston_mls(server) in answer.content
    assert "—" in answer.content
    assert answer.message_id == _last_answer_id(server)
    assert answer.total_tokens > 10
    assert answer.no_answer is False
    nothing = client.chat.ask(session, "Any castles on the moon?")
    assert nothing.no_answer is True


@pytest.mark.parametrize("server", [Variant()], indirect=True)
def test_answer_suffix_and_file_messages(server: ForeignServer, client: eb.Client) -> None:
    """Edit's AnswerSuffix shows in the next answer; an Image message with files is answered."""
    server.seed(4)
    assert client.chatbots.edit(server.serial, AnswerSuffix="Call us today!") == 1
    # Only the setting given was sent, so the others stay as they were.
    assert set(server.requests(EDIT)[-1].body) == {"serialNumber", "AnswerSuffix"}
    assert server.chatbot.settings["Name"] == "Foreign Homes"
    session = client.chat.create_session(server.serial)
    assert client.chat.ask(session, QUESTION).content.endswith("Call us today!")
    image = client.chat.ask(session, "", ask_type="Image", file_ids=[101, 102])
    assert image.content.startswith("Nice photo.")
    sent = server.requests(CLIENT_ASK)[-1].body
    assert sent["fileIds"] == [101, 102]
    assert sent["chatAskType"] == "Image"


# --------------------------------------------------------------------------- streams

FRAMINGS: tuple[Framing, ...] = ("sse", "ndjson", "concatenated")
FINALS: tuple[FinalStyle, ...] = ("standard", "task_completed", "lower")


def _stream(client: eb.Client, server: ForeignServer) -> tuple[str, eb.StreamResult]:
    session = client.chat.create_session(server.serial)
    with client.chat.stream(session, QUESTION) as stream:
        text = "".join(stream)
    return text, stream.result


@pytest.mark.parametrize("final", FINALS)
@pytest.mark.parametrize("framing", FRAMINGS)
def test_stream_framings(
    server: ForeignServer, client: eb.Client, framing: Framing, final: FinalStyle
) -> None:
    """Each framing and final-object style of the addendum gives the whole answer, its IDs and
    tokens, marked complete."""
    server.seed(8)
    server.variant = Variant(framing=framing, final=final)
    text, result = _stream(client, server)
    assert _boston_mls(server) in text
    assert result.answer == text
    assert result.complete is True
    assert result.answer_id == _last_answer_id(server)
    assert result.question_id == _last_answer_id(server) - 1
    assert result.total_tokens is not None
    assert result.total_tokens > 10


STREAM_SHAPES: dict[str, Variant] = {
    "sse-crlf-events-comments-done": Variant(sse_crlf=True, sse_extras=True),
    "sse-in-3-byte-pieces": Variant(stream_chunk=3),
    "ndjson-in-5-byte-pieces": Variant(framing="ndjson", stream_chunk=5),
    "concatenated-in-1-byte-pieces": Variant(framing="concatenated", stream_chunk=1),
    "sse-camel-final": Variant(camel_case=True),
    "ndjson-camel-task-completed": Variant(
        framing="ndjson", camel_case=True, final="task_completed"
    ),
    "ndjson-as-x-ndjson": Variant(framing="ndjson", stream_content_type="application/x-ndjson"),
    "concatenated-as-text-plain": Variant(
        framing="concatenated", stream_content_type="text/plain; charset=utf-8"
    ),
    "sse-with-bom": Variant(stream_bom=True),
    "ndjson-with-bom": Variant(framing="ndjson", stream_bom=True),
    "concatenated-with-bom": Variant(framing="concatenated", stream_bom=True),
}


@pytest.mark.parametrize(
    "server", list(STREAM_SHAPES.values()), ids=list(STREAM_SHAPES), indirect=True
)
def test_stream_shapes(server: ForeignServer, client: eb.Client) -> None:
    """Line endings, SSE extras, objects and characters split across chunks, camelCase final
    keys, other content types, a byte-order mark (a .NET StreamWriter's UTF-8 preamble)."""
    server.seed(8)
    text, result = _stream(client, server)
    assert _boston_mls(server) in text
    assert "—" in text
    assert result.answer == text
    assert result.complete is True
    assert result.answer_id == _last_answer_id(server)


@pytest.mark.parametrize("framing", FRAMINGS)
def test_stream_without_a_final_object(
    server: ForeignServer, client: eb.Client, framing: Framing
) -> None:
    """A stream that just ends: the answer is the joined fragments, marked incomplete."""
    server.seed(8)
    server.variant = Variant(framing=framing, final="none")
    text, result = _stream(client, server)
    assert _boston_mls(server) in text
    assert result.answer == text
    assert result.complete is False
    assert result.answer_id is None


@pytest.mark.parametrize("server", [Variant(framing="json_array")], indirect=True)
def test_stream_as_a_json_array(server: ForeignServer, client: eb.Client) -> None:
    """ASP.NET Core writes an ``IAsyncEnumerable`` as one JSON array (``application/json``):
    the objects are read as the stream's, the answer whole."""
    server.seed(8)
    text, result = _stream(client, server)
    assert _boston_mls(server) in text
    assert result.answer == text
    assert result.complete is True


@pytest.mark.parametrize(
    ("code", "error"), [(500, eb.ServerError), (429, eb.RateLimitError), (404, eb.NotFoundError)]
)
@pytest.mark.parametrize("framing", FRAMINGS)
def test_error_envelope_inside_the_stream(
    server: ForeignServer,
    client: eb.Client,
    framing: Framing,
    code: int,
    error: type[eb.APIError],
) -> None:
    """``{"Success": false, "Code": ..., "Message": ...}`` as the stream's first object, or after
    two fragments: the error of that Code, with the server's message; never an answer."""
    server.seed(8)
    session = client.chat.create_session(server.serial)
    for where in ("before", "after"):
        server.variant = Variant(framing=framing, stream_failure=where, stream_failure_code=code)
        with pytest.raises(error) as caught, client.chat.stream(session, QUESTION) as stream:
            for _ in stream:
                pass
        assert caught.value.code == code
        assert "overloaded" in str(caught.value)


@pytest.mark.parametrize("server", [Variant(stream_cut=True)], indirect=True)
def test_stream_cut_off_is_a_connection_error(server: ForeignServer, client: eb.Client) -> None:
    """The connection drops mid-body: APIConnectionError, with the text so far kept."""
    server.seed(8)
    session = client.chat.create_session(server.serial)
    with pytest.raises(eb.APIConnectionError), client.chat.stream(session, QUESTION) as stream:
        for _ in stream:
            pass
    assert len(server.requests(CLIENT_ASK)) == 1  # a sent question is never sent again


@pytest.mark.parametrize(
    "server",
    [Variant(framing="ndjson", camel_case=True), Variant(stream_chunk=2, sse_extras=True)],
    ids=["ndjson-camel", "sse-in-pieces"],
    indirect=True,
)
def test_async_stream(server: ForeignServer) -> None:
    """The AsyncClient's stream decodes the same variants."""
    server.seed(8)

    async def run() -> tuple[str, eb.StreamResult]:
        async with aclient_for(server) as client:
            session = await client.chat.create_session(server.serial)
            async with client.chat.stream(session, QUESTION) as stream:
                text = "".join([piece async for piece in stream])
            return text, stream.result

    text, result = asyncio.run(run())
    assert _boston_mls(server) in text
    assert result.answer == text
    assert result.complete is True


# --------------------------------------------------------------------------- limits


def test_rate_limit_from_the_chatbot_settings(server: ForeignServer, client: eb.Client) -> None:
    """RateLimitCount 1 per 60 s: the second question is a RateLimitError carrying the
    chatbot's RateLimitMessage and the wait, raised at once and sent once."""
    server.seed(4)
    client.chatbots.edit(
        server.serial, RateLimitCount=1, RateLimitTime=60, RateLimitMessage="Easy, tiger!"
    )
    session = client.chat.create_session(server.serial)
    client.chat.ask(session, QUESTION)
    with pytest.raises(eb.RateLimitError) as caught:
        client.chat.ask(session, QUESTION)
    assert "Easy, tiger!" in str(caught.value)
    assert caught.value.retry_after is not None
    assert 0 < caught.value.retry_after <= 60
    assert len(server.requests(CLIENT_ASK)) == 2


def test_monthly_message_limit(server: ForeignServer, client: eb.Client) -> None:
    """MessageLimit 0: a question is refused with 429 saying the monthly limit is reached."""
    client.chatbots.edit(server.serial, MessageLimit=0)
    session = client.chat.create_session(server.serial)
    with pytest.raises(eb.RateLimitError) as caught:
        client.chat.ask(session, QUESTION)
    assert "monthly" in str(caught.value)


# --------------------------------------------------------------------------- the harness

CASES = pd.DataFrame(
    [
        {"question": "Homes in Boston?", "expect_contains": "Boston"},
        {"question": "Anything in Phoenix?", "expect_contains": "Phoenix|MLS"},
        {"question": "Any castles on the moon?", "expect_no_answer": True},
        {"question": "And in Denver?", "expect_regex": r"listings? in Denver", "conversation": "a"},
        {"question": "Now Austin", "expect_not_contains": "Denver", "conversation": "a"},
    ]
)


@pytest.mark.parametrize(
    "server",
    [Variant(), Variant(camel_case=True, ask_keys="pascal", bom=True)],
    ids=["contract", "camel-pascal-bom"],
    indirect=True,
)
def test_run_chat_tests(server: ForeignServer, client: eb.Client) -> None:
    """A small batch of cases passes, each answered once, conversation cases in one session."""
    server.seed(12)
    results = eb.run_chat_tests(client, server.serial, CASES, concurrency=3, progress=False)
    frame = results.frame
    assert results.ok, frame[["question", "answer", "why", "error"]].to_dict("records")
    assert list(frame["attempts"]) == [1, 1, 1, 1, 1]
    assert frame["session_id"].iloc[3] == frame["session_id"].iloc[4]
    assert frame["no_answer"].tolist() == [False, False, True, False, False]


def test_run_chat_tests_waits_out_a_short_throttle(
    server: ForeignServer, client: eb.Client
) -> None:
    """A 429 with Retry-After 1 on the first question: waited out, asked again, passed."""
    server.seed(12)
    server.variant = Variant(throttle=Throttle(frozenset({CLIENT_ASK}), retry_after="1"))
    results = eb.run_chat_tests(client, server.serial, CASES.iloc[:1], progress=False)
    assert results.ok
    assert results.frame["attempts"].tolist() == [2]
