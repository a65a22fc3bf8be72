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

The answer is read as :mod:`.folding` makes it plain (invisible characters dropped, every space a
space, full-width forms as ASCII), and every claim points back into the answer as written. Each
step costs time in proportion to the answer's length (or that times a logarithm): the sentence
of a position is found by bisection, the facts find their listing by bisection over the
mentions, and which characters are taken is one mask (:class:`.spans.Taken`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import TypeVar

from estatebot.chat.factcheck.addresses import (
    DIRECTIONS,
    STREET_TYPES,
    UNIT_WORDS,
    address_key,
    normalize_token,
)
from estatebot.chat.factcheck.amounts import money_before
from estatebot.chat.factcheck.facts import Fact, read_facts
from estatebot.chat.factcheck.folding import Folded, fold
from estatebot.chat.factcheck.index import Listing, ListingIndex
from estatebot.chat.factcheck.spans import Taken

__all__ = ["Mention", "RawClaim", "mention_key", "read_claims"]

_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]\"']+", re.IGNORECASE)
# One run of separators on each side of the optional word ("MLS No.: #123"): runs of "\s*" side
# by side would try every split of a long run of spaces.
_MLS = re.compile(
    r"\bMLS[\s:#]*(?:(?:No\.?|num(?:ber)?\.?|ID)[\s:#]*)?"
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
    """Every claim the answer makes about a listing, in order of position (positions and texts
    as the answer writes them)."""
    folded = fold(answer)
    claims: list[RawClaim] = []
    context: Mention | None = None
    offset = 0
    for line in folded.text.splitlines(keepends=True):
        if not _CONTINUATION.match(line):
            context = None
        # A blank line ends what the lines before were about.
        context = _read_line(line, offset, index, context, claims) if line.strip() else None
        offset += len(line)
    if folded.origin is None:
        return claims
    return [
        RawClaim(
            _as_written(claim.mention, answer, folded),
            None if claim.fact is None else _as_written(claim.fact, answer, folded),
        )
        for claim in claims
    ]


def mention_key(text: str) -> tuple[str, ...]:
    """One key for every way an answer writes one listing's name: an MLS number by its number
    (``MLS# atx9999`` and ``MLS number ATX9999`` alike), a URL in any case, an address as
    :func:`~estatebot.chat.factcheck.addresses.address_key` makes it (``9999 Elm Street`` and
    ``9999 elm st``)."""
    plain = fold(text).text.strip()
    mls = _MLS.fullmatch(plain)
    if mls is not None:
        return ("mls", mls["id"].casefold())
    if _URL.fullmatch(plain) is not None:
        return ("url", plain.casefold().rstrip("/"))
    return address_key(plain)


def _as_written(found: Placed, answer: str, folded: Folded) -> Placed:
    """A mention or fact read in the folded answer, placed (and quoted) in the answer."""
    start, end = folded.span(found.start, found.end)
    return replace(found, start=start, end=end, text=answer[start:end])


def _read_line(
    line: str,
    offset: int,
    index: ListingIndex,
    context: Mention | None,
    claims: list[RawClaim],
) -> Mention | None:
    """Read one line (at ``offset`` in the answer) into ``claims``; ``context`` is the mention
    the lines before were about, placed in the answer. Returns the one this line leaves."""
    mentions = find_mentions(line, index)
    blanked = _blank(line, [(m.start, m.end) for m in mentions])
    facts = read_facts(blanked, index.cities, index.city_finder)
    owners = _Owners(mentions, _sentences(blanked))
    first_new = len(claims)
    attached: set[int] = set()
    for fact in facts:
        mention = owners.owner(fact)
        if mention is not None:
            attached.add(id(mention))
            mention = _shifted(mention, offset)
        else:
            mention = context  # already placed in the answer: not shifted again
        if mention is None:
            continue  # a number near no listing: not a claim
        claims.append(RawClaim(mention, _shifted(fact, offset)))
    for i, mention in enumerate(mentions):
        if mention.listing is not None or mention.ambiguous or id(mention) in attached:
            continue
        previous = mentions[i - 1] if i else None
        if (
            previous is not None
            and previous.listing is None
            and owners.sentence[i - 1] == owners.sentence[i]
        ):
            continue  # "9999 Elm St, MLS# X1" is one unknown listing named twice
        claims.append(RawClaim(_shifted(mention, offset), None))
    # The lines before are in order already: only this line's claims need sorting.
    claims[first_new:] = sorted(claims[first_new:], key=lambda c: (c.fact or c.mention).start)
    return _shifted(mentions[-1], offset) if mentions else context


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


class _Owners:
    """Which mention of a line each fact is about, found by bisection.

    The mentions are in order of position and never overlap, so their starts, their ends and
    their sentences all rise together.
    """

    def __init__(self, mentions: list[Mention], sentences: list[int]) -> None:
        self.mentions = mentions
        self.sentences = sentences
        self.starts = [m.start for m in mentions]
        self.ends = [m.end for m in mentions]
        self.sentence = [bisect_right(sentences, m.start) for m in mentions]

    def owner(self, fact: Fact) -> Mention | None:
        """The nearest mention before the fact in its sentence, else the nearest after it in
        the sentence, else the nearest before it in the line (None: the line names none)."""
        sentence = bisect_right(self.sentences, fact.start)
        first = bisect_left(self.sentence, sentence)
        past = bisect_right(self.sentence, sentence)  # the sentence's mentions: [first, past)
        ended = bisect_right(self.ends, fact.start)  # mentions [0, ended) end before the fact
        if min(ended, past) > first:
            return self.mentions[min(ended, past) - 1]
        following = max(bisect_left(self.starts, fact.end), first)
        if following < past:
            return self.mentions[following]
        if ended:
            return self.mentions[ended - 1]
        return None


# --------------------------------------------------------------------------- finding mentions


def find_mentions(line: str, index: ListingIndex) -> list[Mention]:
    """The listings named in one line, in order of position (overlaps resolved: URLs first,
    then ``MLS`` numbers, addresses, bare MLS numbers)."""
    found: list[Mention] = []
    taken = Taken(len(line))

    def keep(mention: Mention) -> None:
        found.append(mention)
        taken.add(mention.start, mention.end)

    for match in _URL.finditer(line):
        url = match.group(0).rstrip(".,;:!?*_")
        listing, on_host = index.url(url)
        if listing is not None or on_host:
            keep(Mention(match.start(), match.start() + len(url), url, listing))
    for match in _MLS.finditer(line):
        if taken.free(*match.span()):
            number = match.group("id")
            keep(Mention(match.start(), match.end(), match.group(0), index.mls(number)))
    for mention in [m for m in _addresses(line, index) if taken.free(m.start, m.end)]:
        keep(mention)
    if index.by_mls:
        for match in _BARE.finditer(line):
            word = match.group(0)
            if not _looks_like_mls(word) or not taken.free(*match.span()):
                continue
            listing = index.mls(word)
            if listing is not None:
                keep(Mention(match.start(), match.end(), word, listing))
    return sorted(found, key=lambda m: m.start)


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
    """Whether a number is part of an amount (``$1208``, ``USD 1208``) or of another number."""
    if start > 0 and line[start - 1] in ".,/":
        return True
    return money_before(line, start) is not None


def _joined_run(line: str, tokens: list[re.Match[str]], i: int) -> list[re.Match[str]]:
    """The tokens from ``i`` on that follow each other with only spaces, dots or commas between."""
    run = [tokens[i]]
    for token in tokens[i + 1 : i + 12]:
        # Matched in place: a slice of a long gap would cost its length every time.
        if _JOIN.fullmatch(line, run[-1].end(), token.start()) is None:
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
