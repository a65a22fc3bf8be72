"""Stream fragments are always whole text.

A .NET server escapes a character outside the BMP as two JSON escapes (``\\ud83c\\udfe1``) and
may cut a fragment between them. Every fragment handed out must still encode as UTF-8 (``print``
must not raise), the fragments joined must be the answer, and the answer must be what the
server meant: a pair cut in two is joined, a half left alone is U+FFFD. A UTF-8 character split
across network chunks keeps decoding as before.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api import AsyncClient, Client, _base, _responses
from estatebot.api._text import SurrogateJoiner, whole_text
from estatebot.api.models import StreamResult
from estatebot.api.stream import AnswerAssembler, StreamDecoder

TEXT = "Home 🏡 by the 🌊, café ☕ and 𝄞 music 👩‍👩‍👧"


def units(text: str) -> list[str]:
    """``text`` as its UTF-16 code units, each a one-character str (a surrogate for half of an
    astral character), as a .NET string holds it."""
    data = text.encode("utf-16-le")
    return [chr(int.from_bytes(data[i : i + 2], "little")) for i in range(0, len(data), 2)]


def cut(text: str, points: Iterable[int]) -> list[str]:
    """``text`` cut into fragments at these UTF-16 positions (maybe inside a pair)."""
    code = units(text)
    edges = [0, *sorted(set(points)), len(code)]
    return ["".join(code[a:b]) for a, b in itertools.pairwise(edges)]


def _escaped(obj: Any) -> str:
    # As a .NET server writes it: every non-ASCII character as \uXXXX, a lone half included.
    return json.dumps(obj, ensure_ascii=True)


def _raw(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def sse(objs: list[Any], nl: str = "\n", dump: Callable[[Any], str] = _escaped) -> str:
    return "".join(f"data: {dump(o)}{nl}{nl}" for o in objs)


FRAMINGS: dict[str, Callable[[list[Any]], str]] = {
    "sse": sse,
    "sse-crlf": lambda objs: sse(objs, "\r\n"),
    "sse-cr": lambda objs: sse(objs, "\r"),
    "ndjson": lambda objs: "".join(_escaped(o) + "\n" for o in objs),
    "concatenated": lambda objs: "".join(_escaped(o) for o in objs),
    "json-array": lambda objs: "[" + ",".join(_escaped(o) for o in objs) + "]",
    "json-array-lines": lambda objs: "[\n  " + ",\n  ".join(_escaped(o) for o in objs) + "\n]",
}


def body(fragments: list[str], framing: str, *, final: bool = True) -> bytes:
    objects: list[Any] = [{"content": text} for text in fragments]
    if final:
        objects.append({"QuestionID": 1, "AnswerID": 2, "Answer": TEXT, "TotalToken": 9})
    return FRAMINGS[framing](objects).encode("utf-8")


def handed_out(chunks: Iterable[bytes]) -> tuple[list[str], StreamResult]:
    """The texts a stream hands out, as the client's stream does: each chunk's, then the end's."""
    decoder, assembler = StreamDecoder(), AnswerAssembler()
    texts: list[str] = []
    for chunk in chunks:
        texts += [t for e in decoder.feed(chunk) if (t := assembler.add(e))]
    texts += [t for e in decoder.flush() if (t := assembler.add(e))]
    rest = assembler.finish()
    texts += [rest] if rest else []
    return texts, assembler.result()


def assert_whole(texts: list[str], expected: str) -> None:
    for text in texts:
        text.encode("utf-8")  # raises on a lone surrogate
    assert "".join(texts) == expected


# --------------------------------------------------------------------------- every cut


CUTS = range(1, len(units(TEXT)))


@pytest.mark.parametrize("framing", list(FRAMINGS))
def test_the_text_cut_at_every_position_comes_out_whole(framing: str) -> None:
    for point in CUTS:
        fragments = cut(TEXT, [point])
        texts, result = handed_out([body(fragments, framing)])
        assert_whole(texts, TEXT)
        assert result.answer == TEXT
        assert result.complete


@pytest.mark.parametrize("framing", list(FRAMINGS))
def test_a_fragment_per_code_unit_comes_out_whole(framing: str) -> None:
    # Every boundary at once: each fragment one UTF-16 unit, so every pair is cut.
    fragments = units(TEXT)
    texts, result = handed_out([body(fragments, framing, final=False)])
    assert_whole(texts, TEXT)
    assert result.answer == TEXT  # no final object: the answer is the fragments joined
    assert not result.complete


@pytest.mark.parametrize("framing", list(FRAMINGS))
def test_cuts_and_network_chunks_together(framing: str) -> None:
    # The body cut into one-byte chunks too: an escape split across reads.
    fragments = cut(TEXT, [6, 7, 14, 15, 27])
    data = body(fragments, framing)
    texts, result = handed_out(data[i : i + 1] for i in range(len(data)))
    assert_whole(texts, TEXT)
    assert result.answer == TEXT


@pytest.mark.parametrize("framing", ["sse", "ndjson", "concatenated", "json-array"])
def test_a_utf8_character_split_across_chunks_still_decodes(framing: str) -> None:
    # The raw UTF-8 of the text (no escapes), cut at every byte between two reads.
    objects: list[Any] = [{"content": "Home 🏡 "}, {"content": "café ☕"}]
    dumped = {
        "sse": lambda: sse(objects, dump=_raw),
        "ndjson": lambda: "".join(_raw(o) + "\n" for o in objects),
        "concatenated": lambda: "".join(_raw(o) for o in objects),
        "json-array": lambda: "[" + ",".join(_raw(o) for o in objects) + "]",
    }[framing]()
    data = dumped.encode("utf-8")
    for i in range(len(data) + 1):
        texts, result = handed_out([data[:i], data[i:]])
        assert_whole(texts, "Home 🏡 café ☕")
        assert result.answer == "Home 🏡 café ☕"


# --------------------------------------------------------------------------- halves left alone


@pytest.mark.parametrize(
    ("fragments", "expected"),
    [
        (["a\ud83c"], ["a", "\ufffd"]),  # a high half at the very end
        (["a\ud83c", "b"], ["a", "\ufffdb"]),  # its low half never came
        (["\udfe1b"], ["\ufffdb"]),  # a low half with nothing before it
        (["a\ud83c\ud83c", "\udfe1"], ["a\ufffd", "🏡"]),  # two highs: the second pairs
        (["\ud83c", "", "\udfe1"], ["🏡"]),  # an empty fragment between the halves
    ],
)
def test_halves_left_alone_become_the_replacement_character(
    fragments: list[str], expected: list[str]
) -> None:
    texts, result = handed_out([body(fragments, "sse", final=False)])
    assert texts == expected
    assert result.answer == "".join(expected)


def test_a_final_answer_holding_a_lone_half_is_made_whole() -> None:
    data = sse([{"content": "a"}, {"Answer": "a\ud83c", "QuestionID": 1}]).encode()
    texts, result = handed_out([data])
    assert texts == ["a"]
    assert result.answer == "a\ufffd"
    result.answer.encode("utf-8")


def test_whole_text_joins_pairs_and_keeps_whole_text_as_is() -> None:
    assert whole_text("\ud83c\udfe1") == "🏡"
    assert whole_text(TEXT) is TEXT
    joiner = SurrogateJoiner()
    assert [joiner.push("x\ud83c"), joiner.push("\udfe1y"), joiner.end()] == ["x", "🏡y", ""]


# --------------------------------------------------------------------------- through the client


class Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A streamed response body, in these chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("framing", list(FRAMINGS))
async def test_the_clients_stream_hands_out_whole_text(kind: str, framing: str) -> None:
    data = body(units(TEXT), framing)
    chunks = [data[i : i + 7] for i in range(0, len(data), 7)]

    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, stream=Chunks(chunks))

    transport = httpx.MockTransport(answer)
    options: dict[str, Any] = {"base_url": "http://svc.test", "api_key": "surrogate-key-3d1f"}
    texts: list[str] = []
    if kind == "sync":
        with (
            Client(http_client=httpx.Client(transport=transport), **options) as client,
            client.chat.stream(5, "hi") as stream,
        ):
            texts.extend(stream)
        result = stream.result
    else:
        async with (
            AsyncClient(http_client=httpx.AsyncClient(transport=transport), **options) as aclient,
            aclient.chat.stream(5, "hi") as astream,
        ):
            texts.extend([text async for text in astream])
        result = astream.result
    assert_whole(texts, TEXT)
    assert result.answer == TEXT


# --------------------------------------------------------------------------- any text, any cut

# Real text holds no surrogates of its own; astral characters are drawn on purpose.
ASTRAL = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF)
CHARS = st.one_of(st.characters(exclude_categories=["Cs"]), ASTRAL)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(CHARS, max_size=40),
    points=st.lists(st.integers(min_value=0, max_value=80), max_size=8),
    framing=st.sampled_from(list(FRAMINGS)),
    chunk=st.integers(min_value=1, max_value=16),
)
def test_any_text_cut_anywhere_comes_out_whole(
    text: str, points: list[int], framing: str, chunk: int
) -> None:
    length = len(units(text))
    fragments = cut(text, [p for p in points if 0 < p < length])
    data = body(fragments, framing, final=False)
    texts, result = handed_out(data[i : i + chunk] for i in range(0, len(data), chunk))
    assert_whole(texts, text)
    assert result.answer == text


# --------------------------------------------------------------------------- whole replies


def test_a_reply_holding_half_a_character_is_read_as_whole_text() -> None:
    # pydantic's JSON reader refuses a lone "\ud83c"; a .NET string cut mid-character holds one.
    content = (
        b'{"Data": {"List": [{"Description": "Pool \\ud83c", "City": "\\ud83c\\udfe1 Austin"}],'
        b' "VirtualCount": 1}, "Success": true, "Code": 200, "Message": ""}'
    )
    data = _responses.parse_response(_base.LIST, 200, {}, content)
    assert data["List"] == [{"Description": "Pool \ufffd", "City": "🏡 Austin"}]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_plain_answer_to_a_stream_holding_half_a_character_is_whole(kind: str) -> None:
    answer = b'{"Data": {"messageid": 3, "content": "Hi \\ud83c"}, "Success": true, "Code": 200}'

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"}, content=answer)

    transport = httpx.MockTransport(reply)
    options: dict[str, Any] = {"base_url": "http://svc.test", "api_key": "surrogate-key-3d1f"}
    texts: list[str] = []
    if kind == "sync":
        client = Client(http_client=httpx.Client(transport=transport), **options)
        with client.chat.stream(5, "hi") as stream:
            texts.extend(stream)
        result = stream.result
    else:
        aclient = AsyncClient(http_client=httpx.AsyncClient(transport=transport), **options)
        async with aclient.chat.stream(5, "hi") as astream:
            texts.extend([text async for text in astream])
        result = astream.result
    assert_whole(texts, "Hi \ufffd")
    assert result.answer == "Hi \ufffd"
