"""The chat stream as .NET writes it: every non-ASCII character as a ``\\uXXXX`` escape, and the
answer cut into fragments by UTF-16 code units, so one fragment may end with the first half of
a surrogate pair (``\\ud83c``) and the next begin with the second (``\\udfe1``).

Whatever the cut, every fragment the client hands out is whole text (it encodes to UTF-8), and
the fragments join to exactly the answer the server wrote.
"""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import estatebot as eb
from foreign.helpers import aclient_for
from foreign.server import ForeignServer
from foreign.variant import Framing, Variant

#: An answer suffix with characters outside the BMP (a house, a key, a family joined by ZWJs,
#: a flag), beside accented letters and a dash inside it.
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
SUFFIX = f"Welcome home \U0001f3e1\U0001f511 — café, naïve {FAMILY} \U0001f1fa\U0001f1f8!"
QUESTION = "Any castles on the moon?"


def _whole(fragments: list[str]) -> list[str]:
    """The fragments that are not whole text (a lone half of a surrogate pair inside)."""
    broken = []
    for fragment in fragments:
        try:
            fragment.encode("utf-8")
        except UnicodeEncodeError:
            broken.append(fragment)
    return broken


def _ask(client: eb.Client, server: ForeignServer) -> tuple[list[str], eb.StreamResult]:
    session = client.chat.create_session(server.serial)
    with client.chat.stream(session, QUESTION) as stream:
        fragments = list(stream)
    return fragments, stream.result


STREAMS: dict[str, Variant] = {
    "escaped-word-fragments": Variant(stream_ascii=True),
    "escaped-every-position": Variant(stream_ascii=True, fragment_units=1),
    "escaped-every-2-units": Variant(stream_ascii=True, fragment_units=2),
    "escaped-every-3-units": Variant(stream_ascii=True, fragment_units=3),
    "escaped-every-5-units": Variant(stream_ascii=True, fragment_units=5),
    "every-position-in-1-byte-chunks": Variant(fragment_units=1, stream_chunk=1),
    "every-position-in-7-byte-chunks": Variant(fragment_units=1, stream_chunk=7),
    "every-position-ndjson": Variant(fragment_units=1, framing="ndjson"),
    "every-position-concatenated": Variant(fragment_units=1, framing="concatenated"),
    "every-position-json-array": Variant(fragment_units=1, framing="json_array"),
    "every-position-camel-task-completed": Variant(
        fragment_units=1, camel_case=True, final="task_completed"
    ),
    "every-position-no-final-object": Variant(fragment_units=1, final="none"),
    "every-2-units-http10-close-delimited": Variant(fragment_units=2, close_delimited=True),
}


@pytest.mark.parametrize("server", list(STREAMS.values()), ids=list(STREAMS), indirect=True)
def test_fragments_are_whole_text_and_join_to_the_answer(
    server: ForeignServer, client: eb.Client
) -> None:
    """Each fragment encodes to UTF-8; joined, they are the server's answer; so is the result."""
    server.seed(4)
    assert client.chatbots.edit(server.serial, AnswerSuffix=SUFFIX) == 1

    fragments, result = _ask(client, server)

    assert _whole(fragments) == []
    assert "".join(fragments) == server.answers[-1]
    assert server.answers[-1].endswith(SUFFIX)
    assert result.answer == server.answers[-1]
    assert result.complete is (server.variant.final != "none")


@pytest.mark.parametrize("framing", ["sse", "ndjson", "concatenated"])
def test_async_stream_joins_the_halves(server: ForeignServer, framing: Framing) -> None:
    """The AsyncClient's stream, cut at every position: whole fragments, the whole answer."""
    server.seed(4)
    server.variant = Variant(framing=framing, fragment_units=1, stream_chunk=3)

    async def run() -> tuple[list[str], eb.StreamResult]:
        async with aclient_for(server) as client:
            await client.chatbots.edit(server.serial, AnswerSuffix=SUFFIX)
            session = await client.chat.create_session(server.serial)
            async with client.chat.stream(session, QUESTION) as stream:
                fragments = [piece async for piece in stream]
            return fragments, stream.result

    fragments, result = asyncio.run(run())
    assert _whole(fragments) == []
    assert "".join(fragments) == server.answers[-1]
    assert result.answer == server.answers[-1]


# --------------------------------------------------------------------------- the general rule

#: A house, a key, a smile and the two regional letters of a flag: each a surrogate pair.
_ASTRAL = ("\U0001f3e1", "\U0001f511", "\U0001f600", "\U0001f1fa", "\U0001f1f8")
#: Text a listing chatbot plausibly answers with: letters, digits, spaces, punctuation,
#: accented letters, CJK, and emoji outside the BMP (each a surrogate pair in UTF-16).
_ANSWER_TEXT = st.text(
    alphabet=st.sampled_from([*"abc XYZ019.,!?—éüñ日本語", *_ASTRAL, "\u200d"]),
    min_size=1,
    max_size=40,
).filter(lambda text: text.strip() != "")


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(suffix=_ANSWER_TEXT, units=st.integers(1, 6), chunk=st.sampled_from((0, 1, 2, 5, 13)))
def test_any_cut_of_any_text_joins_back(
    server: ForeignServer, client: eb.Client, suffix: str, units: int, chunk: int
) -> None:
    """Any answer text, cut every ``units`` UTF-16 code units and sent in ``chunk``-byte
    pieces: whole fragments, joined to the answer."""
    server.variant = Variant(stream_ascii=True, fragment_units=units, stream_chunk=chunk)
    assert client.chatbots.edit(server.serial, AnswerSuffix=suffix) == 1

    fragments, result = _ask(client, server)

    assert _whole(fragments) == []
    assert "".join(fragments) == server.answers[-1]
    assert result.answer == server.answers[-1]
