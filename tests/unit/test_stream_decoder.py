"""The ClientAsk stream decoder: every framing, any chunking, tolerant of the variants we know."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api.models import StreamResult
from estatebot.api.stream import (
    AnswerAssembler,
    Failure,
    Final,
    Fragment,
    StreamDecodeError,
    StreamDecoder,
    StreamEvent,
    StreamFailure,
    decode_all,
)

FRAGMENTS = ["Bonjour, café é ", "中文房子 ", '🏠 "3 bed"\nline two', ""]
ANSWER = "".join(FRAGMENTS)
FINAL = {"QuestionID": 11, "AnswerID": 12, "Answer": ANSWER, "TotalToken": 345}
FINAL_EVENT = Final({"QuestionID": 11, "AnswerID": 12, "Answer": ANSWER, "TotalToken": 345})
FRAGMENT_EVENTS: list[StreamEvent] = [Fragment(t) for t in FRAGMENTS]
COMPLETE = StreamResult.model_validate({**FINAL, "complete": True})


def _j(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def sse(objs: Iterable[Any], nl: str = "\n") -> str:
    return "".join(f"data: {_j(o)}{nl}{nl}" for o in objs)


def ndjson(objs: Iterable[Any]) -> str:
    return "".join(_j(o) + "\n" for o in objs)


def concatenated(objs: Iterable[Any]) -> str:
    return "".join(_j(o) for o in objs)


def json_array(objs: Iterable[Any], sep: str = ",") -> str:
    """One JSON array of the objects, as ASP.NET Core writes an IAsyncEnumerable."""
    return "[" + sep.join(_j(o) for o in objs) + "]"


FRAMINGS: dict[str, Callable[[Iterable[Any]], str]] = {
    "sse": sse,
    "sse-crlf": lambda objs: sse(objs, "\r\n"),
    "sse-cr": lambda objs: sse(objs, "\r"),
    "ndjson": ndjson,
    "concatenated": concatenated,
    "json-array": json_array,
    "json-array-lines": lambda objs: "\n" + json_array(objs, ",\n  ") + "\n",
}
CONTENT = [{"content": t} for t in FRAGMENTS]
FAILURE = {"Success": False, "Code": 503, "Message": "模型 busy", "Data": None}

# name -> (body, the events it decodes to, its result or the failure it raises)
CASES: dict[str, tuple[str, list[StreamEvent], StreamResult | tuple[int, str]]] = {
    **{
        name: (frame([*CONTENT, FINAL]), [*FRAGMENT_EVENTS, FINAL_EVENT], COMPLETE)
        for name, frame in FRAMINGS.items()
    },
    "task-completed": (
        ndjson([*CONTENT, {"TaskCompleted": True, "QuestionID": 11, "Extra": [1, {"a": "}"}]}]),
        [*FRAGMENT_EVENTS, Final({"QuestionID": 11})],
        StreamResult.model_validate({"QuestionID": 11, "Answer": ANSWER}),
    ),
    "lower-case-final": (
        concatenated(
            [
                *CONTENT,
                {"questionId": 11, "answerid": 12, "answer": ANSWER, "totalToken": 345},
            ]
        ),
        [*FRAGMENT_EVENTS, FINAL_EVENT],
        COMPLETE,
    ),
    "no-answer-flag-and-Content": (
        sse([{"Content": "é"}, {**FINAL, "Answer": "", "noAnswer": True}]),
        [Fragment("é"), Final({**FINAL, "Answer": "", "noAnswer": True})],
        StreamResult.model_validate({**FINAL, "Answer": "é", "noAnswer": True}),
    ),
    "no-final": (
        sse(CONTENT),
        FRAGMENT_EVENTS,
        StreamResult.model_validate({"Answer": ANSWER, "complete": False}),
    ),
    "failure-mid-stream": (
        sse([CONTENT[0], CONTENT[1], FAILURE, CONTENT[2]]),
        [*FRAGMENT_EVENTS[:2], Failure(503, "模型 busy"), FRAGMENT_EVENTS[2]],
        (503, "模型 busy"),
    ),
    "done-marker": (
        sse([*CONTENT, FINAL]) + "data: [DONE]\n\ndata: not json, never read\n\n",
        [*FRAGMENT_EVENTS, FINAL_EVENT],
        COMPLETE,
    ),
    "comments-events-multiline": (
        "\ufeff\r\n: keep-alive 中\n\nevent: ping\n\nid: 7\nretry: 100\nevent: message\n"
        'data: {"content":\ndata:  "🏠 é"}\n\n'
        + ": tail comment\n"
        + sse([{"noise": "ignored"}, FINAL]),
        [Fragment("🏠 é"), FINAL_EVENT],
        COMPLETE,
    ),
    "unknown-objects-ignored": (
        ndjson([{"type": "ping"}, CONTENT[1], {"Success": True, "Code": 200}, {"content": 5}]),
        [FRAGMENT_EVENTS[1]],
        StreamResult.model_validate({"Answer": FRAGMENTS[1], "complete": False}),
    ),
}


def run(
    chunks: Iterable[bytes],
) -> tuple[list[StreamEvent], StreamResult | tuple[int | None, str]]:
    """Feed the chunks, then flush; the events and the result (or the failure raised)."""
    decoder, assembler = StreamDecoder(), AnswerAssembler()
    events = [e for chunk in chunks for e in decoder.feed(chunk)] + decoder.flush()
    try:
        for event in events:
            assembler.add(event)
    except StreamFailure as failure:
        return events, (failure.code, failure.message)
    return events, assembler.result()


@pytest.mark.parametrize("name", CASES)
def test_whole_body_decodes_to_expected(name: str) -> None:
    body, expected_events, expected_result = CASES[name]
    assert run([body.encode()]) == (expected_events, expected_result)


@pytest.mark.parametrize("name", CASES)
def test_any_split_and_one_byte_at_a_time_match_whole(name: str) -> None:
    body = CASES[name][0].encode()
    whole = run([body])
    for i in range(len(body) + 1):
        assert run([body[:i], body[i:]]) == whole, f"split at byte {i}"
    assert run(body[i : i + 1] for i in range(len(body))) == whole


def test_decode_all_result_and_failure() -> None:
    assert decode_all(sse([*CONTENT, FINAL]).encode()) == COMPLETE
    assert decode_all(b"") == StreamResult.model_validate({"complete": False})
    with pytest.raises(StreamFailure, match="busy") as info:
        decode_all(ndjson([CONTENT[0], FAILURE]).encode())
    assert (info.value.code, info.value.message) == (503, "模型 busy")


def test_sse_without_final_blank_line_still_yields_last_event() -> None:
    body = sse([CONTENT[0]]) + "data: " + _j(FINAL)
    assert run([body.encode()])[0] == [FRAGMENT_EVENTS[0], FINAL_EVENT]


def test_final_values_are_typed_and_nulls_dropped() -> None:
    body = ndjson([{"questionid": "11", "AnswerID": None, "TOTALTOKEN": 3, "Answer": "a"}])
    assert run([body.encode()])[0] == [Final({"QuestionID": 11, "TotalToken": 3, "Answer": "a"})]


def test_assembler_prefers_final_answer_and_shows_only_text() -> None:
    assembler = AnswerAssembler()
    assert assembler.add(Fragment("par")) == "par"
    assert assembler.add(Fragment("")) is None
    assert assembler.add(Fragment("tial")) == "tial"
    assert assembler.text == "partial"
    assert assembler.add(Final({"Answer": "full answer", "TotalToken": 9})) is None
    result = assembler.result()
    assert (result.answer, result.total_tokens, result.complete) == ("full answer", 9, True)
    with pytest.raises(StreamFailure) as info:
        assembler.add(Failure(None, "no code"))
    assert (info.value.code, str(info.value)) == (None, "no code")


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'data: {"content": "a"\n\n', "feed"),  # unterminated object in an SSE event
        (b"data: hello\n\n", "feed"),  # not JSON at all
        (b'{"content": "a"} oops', "feed"),  # JSON framing: garbage between objects
        (b'{"content": "a"}\n{"content": "b', "flush"),  # body ends inside an object
        (b'{"content": "\xff"}', "feed"),  # a byte that never starts a UTF-8 character
        (b'{"content": "\xc3', "flush"),  # body ends inside a two-byte character
        (b'{"QuestionID": "eleven"}', "feed"),  # final object with a wrong type
        (b'[{"content": "a"}] {"content": "b"}', "feed"),  # an object after the array closed
        (b'{"content": "a"}, {"content": "b"}', "feed"),  # commas outside an array
        (b'[{"content": "a"}, [1]]', "feed"),  # an array item that is not an object
    ],
)
def test_malformed_raises_stream_decode_error(body: bytes, where: str) -> None:
    decoder = StreamDecoder()
    if where == "flush":
        decoder.feed(body)
    with pytest.raises(StreamDecodeError):
        decoder.feed(body) if where == "feed" else decoder.flush()
    with pytest.raises(StreamDecodeError):
        decode_all(body)
    assert isinstance(StreamDecodeError("x"), ValueError)  # plain callers may catch ValueError


TRICKY = ["data: x", "\n\n", "\r\n\r", '"}{', "[DONE]", ": c", "\\", "\ufeff", "\u2028"]
texts = st.lists(st.one_of(st.text(max_size=12), st.sampled_from(TRICKY)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(
    fragments=texts,
    framing=st.sampled_from(sorted(FRAMINGS)),
    with_final=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=4096), max_size=8),
)
def test_property_any_fragments_any_framing_any_chunking(
    fragments: list[str], framing: str, with_final: bool, cuts: list[int]
) -> None:
    objs: list[dict[str, Any]] = [{"content": t} for t in fragments]
    if with_final:
        objs.append({**FINAL, "Answer": "".join(fragments)})
    body = FRAMINGS[framing](objs).encode()
    bounds = [0, *sorted(c % (len(body) + 1) for c in cuts), len(body)]
    events, result = run(body[a:b] for a, b in itertools.pairwise(bounds))
    assert [e.text for e in events if isinstance(e, Fragment)] == fragments
    assert isinstance(result, StreamResult)
    assert (result.answer, result.complete) == ("".join(fragments), with_final)
