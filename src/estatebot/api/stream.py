"""A tolerant decoder for the body of a streamed ClientAsk, with no I/O of its own.

The body is a sequence of JSON objects: fragments ``{"content": "..."}`` then one final object
(``QuestionID``, ``AnswerID``, ``Answer``, ``TotalToken``). The contract does not say how they are
framed, so every framing the addendum lists is accepted, detected from the first non-blank byte:

* ``{``: bare JSON objects, newline-delimited or concatenated with no separator;
* anything else: Server-Sent Events, one object per event's data, with an optional ``[DONE]``.

:class:`StreamDecoder` turns bytes (in chunks of any size) into :data:`StreamEvent` values;
:class:`AnswerAssembler` turns those into the fragment texts to hand out, always whole text (a
character cut between two fragments, as ``\ud83c`` then ``\udfe1``, is joined: see
:mod:`._text`), and a :class:`~estatebot.api.models.StreamResult`.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder, SSELineDecoder
from pydantic import ValidationError

from estatebot.api._text import SurrogateJoiner, whole_text
from estatebot.api.models import StreamResult


class StreamDecodeError(ValueError):
    """The stream cannot be decoded: malformed JSON, invalid UTF-8, or a truncated object."""


class StreamFailure(Exception):
    """The stream carried a failure envelope (``Success: false``) with its ``Code`` and ``Message``.

    Raised by :meth:`AnswerAssembler.add` and :func:`decode_all`; the client maps it to the
    :mod:`estatebot.errors` tree.
    """

    def __init__(self, code: int | None, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"stream failed (Code {code}): {message}" if code is not None else message)


@dataclass(frozen=True)
class Fragment:
    """A piece of answer text, to show as it arrives."""

    text: str


@dataclass(frozen=True)
class Final:
    """The final object, keys normalized to ``QuestionID``, ``AnswerID``, ``Answer``,
    ``TotalToken`` and ``noAnswer`` (only those present and not null)."""

    payload: dict[str, Any]


@dataclass(frozen=True)
class Failure:
    """A failure envelope found inside the stream."""

    code: int | None
    message: str


StreamEvent = Fragment | Final | Failure

# Lower-cased wire key -> the name StreamResult knows it by (its alias).
_FINAL_KEYS = {
    "questionid": "QuestionID",
    "answerid": "AnswerID",
    "answer": "Answer",
    "totaltoken": "TotalToken",
    "noanswer": "noAnswer",
}
# Any of these marks an object as the final one, even without `TaskCompleted: true`.
_FINAL_MARKERS = ("questionid", "answerid", "answer", "totaltoken")
_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def classify(obj: Any) -> StreamEvent | None:
    """The event one decoded JSON value stands for, or None for anything unrecognized."""
    if not isinstance(obj, dict):
        return None
    keys: dict[str, Any] = {}
    for key, value in obj.items():
        keys.setdefault(str(key).lower(), value)  # the first spelling of a key wins
    if keys.get("success") is False:
        return Failure(_as_int(keys.get("code")), str(keys.get("message") or ""))
    if keys.get("taskcompleted") is True or any(k in keys for k in _FINAL_MARKERS):
        payload = {name: keys[k] for k, name in _FINAL_KEYS.items() if keys.get(k) is not None}
        try:
            dumped = StreamResult.model_validate(payload).model_dump(by_alias=True)
        except ValidationError as exc:
            raise StreamDecodeError(f"bad final object {_short(json.dumps(obj))}") from exc
        # Keep only the keys the server sent, but with their validated types ("12" -> 12).
        return Final({name: dumped[name] for name in payload})
    text = keys.get("content")
    return Fragment(text) if isinstance(text, str) else None


# What matters to where a JSON object ends: quotes, backslashes and brackets.
_STRUCTURE = re.compile(r'["\\{}\[\]]')


class _ObjectSplitter:
    """Cuts JSON text, fed in chunks, into the texts of whole top-level objects.

    Each character is looked at once and an object is parsed only once its closing brace has
    come. Parsing the growing text of an unfinished object again at every chunk took time
    quadratic in its size: a server sending one endless string (8 MiB of it took 1.8 s, 64 MiB
    minutes) could hold the client's CPU long before any size cap or deadline.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []  # the text of the object begun and not yet closed
        # The objects may come as the items of one JSON array (ASP.NET Core writes an
        # IAsyncEnumerable so): None until the first character tells, then open, then closed.
        self._array: Literal["open", "closed"] | None = None
        self._started = False
        self._depth = 0
        self._in_string = False
        self._escaped = False  # a backslash in a string ended the last chunk

    @property
    def pending(self) -> str:
        """The text of an object begun and not yet closed."""
        return "".join(self._parts)

    def feed(self, text: str) -> list[str]:
        """The objects this text completes; raises if something other than an object starts."""
        objects: list[str] = []
        pos, start = 0, 0
        while pos < len(text):
            if self._depth == 0:
                match = _JSON_SPACE.match(text, pos)  # always matches (`*`), maybe empty
                pos = match.end() if match else pos
                if pos == len(text):
                    return objects
                char = text[pos]
                if char == "[" and not self._started:
                    self._array, self._started, pos = "open", True, pos + 1
                    continue
                if self._array == "open" and char in ",]":
                    self._array = "closed" if char == "]" else "open"
                    pos += 1
                    continue
                if char != "{" or self._array == "closed":
                    # Every item is an object, so this can never become valid.
                    raise StreamDecodeError(f"expected a JSON object, got {_short(text[pos:])}")
                self._started = True
                start, pos, self._depth = pos, pos + 1, 1
            end = self._close(text, pos)
            if end is None:
                break
            objects.append("".join([*self._parts, text[start:end]]))
            self._parts, pos = [], end
        if self._depth:
            self._parts.append(text[start:])
        return objects

    def _close(self, text: str, pos: int) -> int | None:
        """Just past the brace closing the current object, or None if it goes on."""
        skip = pos
        if self._escaped and pos < len(text):  # this first character is the escaped one
            self._escaped, skip = False, pos + 1
        for match in _STRUCTURE.finditer(text, pos):
            i = match.start()
            if i < skip:
                continue
            char = text[i]
            if self._in_string:
                if char == "\\":
                    skip = i + 2
                    self._escaped = skip > len(text)
                elif char == '"':
                    self._in_string = False
            elif char == '"':
                self._in_string = True
            elif char in "{[":
                self._depth += 1
            elif char in "}]":
                self._depth -= 1
                if self._depth == 0:
                    return i + 1
        return None


class StreamDecoder:
    """Incremental decoder: :meth:`feed` each chunk of the body, then :meth:`flush` at its end."""

    def __init__(self) -> None:
        # utf-8-sig drops a byte order mark; the incremental decoder keeps a multi-byte
        # character split across chunks until its last byte arrives.
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self._framing: Literal["json", "sse"] | None = None
        self._head = ""  # blank text seen before the framing is known
        self._objects = _ObjectSplitter()  # JSON framing
        self._lines = SSELineDecoder()
        self._sse = SSEDecoder()
        self._done = False  # SSE `[DONE]` seen: the rest of the body is ignored

    def feed(self, chunk: bytes) -> list[StreamEvent]:
        """The events completed by this chunk (any size, down to one byte)."""
        return self._text(self._decode_utf8(chunk, final=False))

    def flush(self) -> list[StreamEvent]:
        """The events left at the end of the body; raises if it ends inside a JSON object."""
        events = self._text(self._decode_utf8(b"", final=True))
        if self._done:
            return events
        if self._framing == "sse":
            # Tolerate a body missing its last newline or its final blank line.
            events += self._sse_lines([*self._lines.flush(), ""])
        elif self._framing == "json" and self._objects.pending.strip():
            pending = self._objects.pending
            raise StreamDecodeError(f"stream ends inside a JSON object: {_short(pending)}")
        return events

    def _decode_utf8(self, chunk: bytes, *, final: bool) -> str:
        try:
            return self._utf8.decode(chunk, final)
        except UnicodeDecodeError as exc:
            raise StreamDecodeError(f"stream is not valid UTF-8: {exc}") from exc

    def _text(self, text: str) -> list[StreamEvent]:
        if self._done or not text:
            return []
        if self._framing is None:
            self._head += text
            start = self._head.lstrip(" \t\r\n")
            if not start:
                return []
            self._framing = "json" if start[0] in "{[" else "sse"
            text, self._head = self._head, ""
        if self._framing == "json":
            return self._json_objects(text)
        return self._sse_lines(self._lines.decode(text))

    def _json_objects(self, text: str) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for item in self._objects.feed(text):
            try:
                obj = json.loads(item)
            except json.JSONDecodeError as exc:
                raise StreamDecodeError(f"malformed JSON object: {_short(item)}") from exc
            event = classify(obj)
            if event is not None:
                events.append(event)
        return events

    def _sse_lines(self, lines: list[str]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for line in lines:
            sse: ServerSentEvent | None = self._sse.decode(line)
            data = sse.data.strip() if sse is not None else ""
            if not data:  # no event yet, or one without data (only `event:`, `id:`, `retry:`)
                continue
            if data == "[DONE]":
                self._done = True
                break
            try:
                obj = json.loads(data)
            except json.JSONDecodeError as exc:
                raise StreamDecodeError(f"malformed JSON in SSE data: {_short(data)}") from exc
            event = classify(obj)
            if event is not None:
                events.append(event)
        return events


class AnswerAssembler:
    """Accumulates stream events into the answer and the final :class:`StreamResult`.

    Every text it hands out is whole: a high surrogate ending a fragment is held back until the
    next fragment brings its low half (or the stream ends: then it is U+FFFD), so each text
    encodes as UTF-8 and the texts joined are the answer.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._final: Final | None = None
        self._joiner = SurrogateJoiner()

    def add(self, event: StreamEvent) -> str | None:
        """Record one event; returns the fragment text to show, if any.

        Raises :class:`StreamFailure` for a :class:`Failure` event.
        """
        if isinstance(event, Failure):
            raise StreamFailure(event.code, event.message)
        if isinstance(event, Final):
            self._final = event
            return None
        text = self._joiner.push(event.text)
        self._parts.append(text)
        return text or None

    def finish(self) -> str | None:
        """The text held back at the end of the stream (U+FFFD for half a character whose other
        half never came), recorded as the answer's last text; None if nothing was held."""
        text = self._joiner.end()
        if not text:
            return None
        self._parts.append(text)
        return text

    @property
    def text(self) -> str:
        """The fragments handed out so far, joined."""
        return "".join(self._parts)

    def result(self) -> StreamResult:
        """The final object (its answer falling back to the fragments), or the fragments alone
        marked ``complete=False`` when the stream ended without a final object. Ends the
        fragments (:meth:`finish`)."""
        self.finish()
        if self._final is None:
            return StreamResult.model_validate({"Answer": self.text, "complete": False})
        payload = dict(self._final.payload)
        answer = payload.get("Answer")
        payload["Answer"] = whole_text(answer) if answer else self.text
        return StreamResult.model_validate(payload)


def decode_all(body: bytes) -> StreamResult:
    """Decode a whole body at once.

    Raises :class:`StreamDecodeError` if it is malformed and :class:`StreamFailure` if it
    carries a failure envelope.
    """
    decoder = StreamDecoder()
    assembler = AnswerAssembler()
    for event in [*decoder.feed(body), *decoder.flush()]:
        assembler.add(event)
    return assembler.result()
