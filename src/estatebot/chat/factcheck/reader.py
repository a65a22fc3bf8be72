"""Reading an answer: which listings it names, and which of its facts are about which listing.

A listing is named (a *mention*) by an MLS number (``MLS# ATX1001``, ``MLS 1234567``, or a bare
MLS number the listings have), a street address (``1208 S Lamar Blvd``, ``1208 south lamar
boulevard``, ``301 West Ave #1204``), or a URL. A name the listings do not have is an unknown
listing when it is unmistakably a listing's name: ``MLS`` and a number, a capitalised street
address with a street type, a URL on the host the listings' URLs use.

Each fact (:mod:`.facts`) is about the nearest listing named before it in its sentence, else the
nearest named after it in the sentence, else the listing the line was about so far. A line
starting with a bullet or an indent goes on with the listing of the line before (the usual
"**address**" then "- Price: ..." layout); any other line starts afresh. A fact near no mention is
not a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TypeVar

from estatebot.chat.factcheck.addresses import (
    DIRECTIONS,
    STREET_TYPES,
    UNIT_WORDS,
    normalize_token,
)
from estatebot.chat.factcheck.facts import Fact, read_facts
from estatebot.chat.factcheck.index import Listing, ListingIndex

__all__ = ["Mention", "RawClaim", "read_claims"]

_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]\"']+", re.IGNORECASE)
_MLS = re.compile(
    r"\bMLS\s*(?:#|No\.?|num(?:ber)?\.?|ID)?\s*[:#]?\s*#?\s*"
    r"(?P<id>[A-Za-z0-9]*\d[A-Za-z0-9-]*[A-Za-z0-9]|\d)",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"#|[^\W_]+(?:['’][^\W_]+)?")
_JOIN = re.compile(r"[ \t.,]*")
_BARE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")
_SENTENCE_END = re.compile(r"[.!?;](?=\s+\S)")
_ABBREVIATION = re.compile(
    r"(?:\b[A-Za-z]|\b(?:approx|incl|vs|no|sq|ft|mr|mrs|ms|est|e\.g|i\.e))$", re.IGNORECASE
)
_CONTINUATION = re.compile(r"^(?:\s+|\s*[-*•+–](?:\s|$))")
_MAX_STREET_WORDS = 5
# "1. " or "2) " numbers a list item: never a house number.
_LIST_MARKER = re.compile(r"[.)](?:\s|$)")


@dataclass(frozen=True)
class Mention:
    """A listing named in the text: where, as written, and which listing (None: unknown)."""

    start: int
    end: int
    text: str
    listing: Listing | None
    ambiguous: bool = False


#: A mention or a fact: both know where they stand in the text.
Placed = TypeVar("Placed", Mention, Fact)


@dataclass(frozen=True)
class RawClaim:
    """A fact and the mention it is about (the fact is None for an unknown listing named with
    no fact next to it)."""

    mention: Mention
    fact: Fact | None


def read_claims(answer: str, index: ListingIndex) -> list[RawClaim]:
    """Every claim the answer makes about a listing, in order of position."""
    claims: list[RawClaim] = []
    context: Mention | None = None
    offset = 0
    for line in answer.splitlines(keepends=True):
        if not _CONTINUATION.match(line):
            context = None
        # A blank line ends what the lines before were about.
        context = _read_line(line, offset, index, context, claims) if line.strip() else None
        offset += len(line)
    return claims


def _read_line(
    line: str,
    offset: int,
    index: ListingIndex,
    context: Mention | None,
    claims: list[RawClaim],
) -> Mention | None:
    mentions = find_mentions(line, index)
    blanked = _blank(line, [(m.start, m.end) for m in mentions])
    facts = read_facts(blanked, index.cities, index.city_finder)
    sentences = _sentences(blanked)
    attached: set[int] = set()
    for fact in facts:
        mention = _owner(fact, mentions, sentences, context)
        if mention is None:
            continue  # a number near no listing: not a claim
        claims.append(RawClaim(_shifted(mention, offset), _shifted(fact, offset)))
        attached.add(id(mention))
    for i, mention in enumerate(mentions):
        if mention.listing is not None or mention.ambiguous or id(mention) in attached:
            continue
        previous = mentions[i - 1] if i else None
        if (
            previous is not None
            and previous.listing is None
            and _sentence_of(previous.start, sentences) == _sentence_of(mention.start, sentences)
        ):
            continue  # "9999 Elm St, MLS# X1" is one unknown listing named twice
        claims.append(RawClaim(_shifted(mention, offset), None))
    claims.sort(key=lambda c: (c.fact or c.mention).start)
    return mentions[-1] if mentions else context


def _shifted(found: Placed, offset: int) -> Placed:
    """A mention or fact read in a part of the text, placed in the whole text."""
    return replace(found, start=found.start + offset, end=found.end + offset)


# --------------------------------------------------------------------------- assigning facts


def _sentences(text: str) -> list[int]:
    """The start of each sentence after the first (positions in ``text``)."""
    starts: list[int] = []
    for match in _SENTENCE_END.finditer(text):
        end = match.start()
        if text[end] == "." and _ABBREVIATION.search(text[max(0, end - 5) : end]):
            continue
        starts.append(match.end())
    return starts


def _sentence_of(position: int, starts: list[int]) -> int:
    return sum(1 for start in starts if start <= position)


def _owner(
    fact: Fact, mentions: list[Mention], sentences: list[int], context: Mention | None
) -> Mention | None:
    sentence = _sentence_of(fact.start, sentences)
    same = [m for m in mentions if _sentence_of(m.start, sentences) == sentence]
    before = [m for m in same if m.end <= fact.start]
    if before:
        return before[-1]
    after = [m for m in same if m.start >= fact.end]
    if after:
        return after[0]
    earlier = [m for m in mentions if m.end <= fact.start]
    if earlier:
        return earlier[-1]
    return context


# --------------------------------------------------------------------------- finding mentions


def find_mentions(line: str, index: ListingIndex) -> list[Mention]:
    """The listings named in one line, in order of position (overlaps resolved: URLs first,
    then ``MLS`` numbers, addresses, bare MLS numbers)."""
    taken: list[Mention] = []
    for match in _URL.finditer(line):
        url = match.group(0).rstrip(".,;:!?*_")
        listing, on_host = index.url(url)
        if listing is not None or on_host:
            taken.append(Mention(match.start(), match.start() + len(url), url, listing))
    for match in _MLS.finditer(line):
        if _free(match.span(), taken):
            number = match.group("id")
            taken.append(Mention(match.start(), match.end(), match.group(0), index.mls(number)))
    taken += [m for m in _addresses(line, index) if _free((m.start, m.end), taken)]
    if index.by_mls:
        for match in _BARE.finditer(line):
            word = match.group(0)
            if not _looks_like_mls(word) or not _free(match.span(), taken):
                continue
            listing = index.mls(word)
            if listing is not None:
                taken.append(Mention(match.start(), match.end(), word, listing))
    return sorted(taken, key=lambda m: m.start)


def _free(span: tuple[int, int], taken: list[Mention]) -> bool:
    return not any(span[0] < m.end and m.start < span[1] for m in taken)


def _looks_like_mls(word: str) -> bool:
    # A bare number like 1850 could be an area or a year: only MLS-shaped words count.
    has_digit = any(c.isdigit() for c in word)
    return has_digit and (any(c.isalpha() for c in word) or len(word) >= 6)


def _addresses(line: str, index: ListingIndex) -> list[Mention]:
    tokens = list(_TOKEN.finditer(line))
    found: list[Mention] = []
    i = 0
    while i < len(tokens):
        first = tokens[i].group(0)
        if (
            not first[0].isdigit()
            or len(first) > 7
            or _preceded_by_money(line, tokens[i].start())
            or _LIST_MARKER.match(line, tokens[i].end())
        ):
            i += 1
            continue
        run = _joined_run(line, tokens, i)
        mention = _known_address(line, run, index) or _unknown_address(line, run)
        if mention is None:
            i += 1
            continue
        found.append(mention)
        while i < len(tokens) and tokens[i].start() < mention.end:
            i += 1
    return found


def _preceded_by_money(line: str, start: int) -> bool:
    return start > 0 and line[start - 1] in "$€£¥.,/"


def _joined_run(line: str, tokens: list[re.Match[str]], i: int) -> list[re.Match[str]]:
    """The tokens from ``i`` on that follow each other with only spaces, dots or commas between."""
    run = [tokens[i]]
    for token in tokens[i + 1 : i + 12]:
        gap = line[run[-1].end() : token.start()]
        if _JOIN.fullmatch(gap) is None or "\n" in gap:
            break
        run.append(token)
    return run


def _known_address(line: str, run: list[re.Match[str]], index: ListingIndex) -> Mention | None:
    """The longest start of ``run`` that is a listing's address (with or without its unit)."""
    key: list[str] = []
    best: tuple[int, Listing | None, bool] | None = None
    for n, token in enumerate(run, 1):
        key.append(normalize_token(token.group(0)))
        as_tuple = tuple(key)
        full = index.by_address.get(as_tuple)
        if full is not None:
            best = (n, index.listings[full], False)
        elif as_tuple in index.by_street:
            positions = index.by_street[as_tuple]
            listing = index.listings[positions[0]] if len(positions) == 1 else None
            best = (n, listing, len(positions) > 1)
        if not index.is_address_prefix(as_tuple):
            break
    if best is None:
        return None
    n, listing, ambiguous = best
    start, end = run[0].start(), run[n - 1].end()
    unit_end = _unit_after(run, n)
    if unit_end is not None and "#" not in key[:n]:
        # The building is known, but not with the unit the answer names.
        return Mention(start, unit_end, line[start:unit_end], None)
    return Mention(start, end, line[start:end], listing, ambiguous)


def _unit_after(run: list[re.Match[str]], n: int) -> int | None:
    """The end of a unit (``#12``, ``Apt 12``) right after the first ``n`` tokens, if any."""
    rest = run[n:]
    if len(rest) >= 2 and normalize_token(rest[0].group(0)) == "#":
        number = rest[2] if normalize_token(rest[1].group(0)) == "#" and len(rest) > 2 else rest[1]
        if any(c.isdigit() for c in number.group(0)):
            return number.end()
    return None


def _unknown_address(line: str, run: list[re.Match[str]]) -> Mention | None:
    """A capitalised street address with a street type, which no listing has."""
    for n in range(2, min(len(run), _MAX_STREET_WORDS + 2) + 1):
        word = run[n - 1].group(0)
        if not (word[0].isupper() or word[0].isdigit()):
            return None  # "5 minutes from the Court": street names are capitalised
        if word.casefold() in STREET_TYPES and n > 2:
            end = run[n - 1].end()
            rest = run[n:]
            if rest and rest[0].group(0).casefold() in DIRECTIONS and rest[0].group(0)[0].isupper():
                end, rest = rest[0].end(), rest[1:]
            if len(rest) >= 2 and rest[0].group(0).casefold() in UNIT_WORDS:
                end = rest[1].end()
            return Mention(run[0].start(), end, line[run[0].start() : end], None)
    return None


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by as many spaces (positions are kept)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
