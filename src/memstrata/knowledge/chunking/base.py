"""What every chunker shares: the span type, the protocol, bilingual delimiters, size guards, overlap.

A chunker only decides where to cut. It returns character spans into the document's Markdown, so
provenance (span, heading path, page) is computed once for every chunker, and the stored text is
always an exact slice of the source: no chunker can rewrite, translate or drop text. The spans of a
chunker cover every non-blank character of the input; overlap is added afterwards, in tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import Field, model_validator

from memstrata.han import is_han
from memstrata.knowledge.tokens import TokenCounter, char_costs, count_tokens
from memstrata.types import Frozen


@dataclass(frozen=True)
class Piece:
    """A half-open character span [start, end) of the Markdown. With overlap, ``own_start`` is where the
    piece's own text begins (after the repeated tail of the previous piece): its page and headings."""

    start: int
    end: int
    own_start: int | None = None

    @property
    def anchor(self) -> int:
        return self.start if self.own_start is None else self.own_start


@dataclass(frozen=True)
class SplitResult:
    pieces: list[Piece]
    notes: tuple[str, ...] = ()  # anything the caller should know, e.g. a model answer that was not used
    model_calls: int = 0
    embedded_texts: int = 0


class Chunker(Protocol):
    name: str

    def split(self, text: str) -> SplitResult: ...


class ChunkSize(Frozen):
    """Chunk size and overlap, in (estimated) tokens."""

    size: int = Field(default=256, ge=8, le=8192)
    overlap: int = Field(default=32, ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkSize:
        if self.overlap >= self.size // 2:
            raise ValueError(f"overlap ({self.overlap}) must be under half the chunk size ({self.size})")
        return self


@dataclass(frozen=True)
class Delimiters:
    """Where text may be cut, best first. Chinese punctuation sits beside its Western counterpart, so a
    Chinese paragraph without spaces is cut after 。！？ rather than mid-word."""

    headings: tuple[str, ...] = tuple("\n" + "#" * level + " " for level in range(1, 7))
    paragraphs: tuple[str, ...] = ("\n\n",)
    lines: tuple[str, ...] = ("\n",)
    sentences: tuple[str, ...] = ("。", "！", "？", "…", ". ", "! ", "? ")
    clauses: tuple[str, ...] = ("；", "，", "：", "、", "; ", ", ", ": ")
    levels: tuple[str, ...] = field(default=("headings", "paragraphs", "lines", "sentences", "clauses"))

    def ordered(self) -> list[tuple[str, ...]]:
        return [getattr(self, level) for level in self.levels]


BILINGUAL = Delimiters()


def trimmed(text: str, pieces: Iterable[Piece]) -> list[Piece]:
    """Pieces without surrounding whitespace; blank ones are dropped (they carry no text)."""
    result = []
    for piece in pieces:
        start, end = piece.start, piece.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            result.append(Piece(start, end))
    return result


def cut_by_tokens(text: str, start: int, end: int, size: int, *, soft: bool = True) -> list[Piece]:
    """Fixed-size cuts of text[start:end], at most ``size`` estimated tokens each. With ``soft``, a cut
    moves back to just after whitespace or punctuation in the last fifth of its window, if there is one
    (so words are rarely split)."""
    costs = char_costs(text[start:end])
    pieces: list[Piece] = []
    begin = 0
    while begin < len(costs):
        used, cursor = 0.0, begin
        while cursor < len(costs) and used + costs[cursor] <= size:
            used += costs[cursor]
            cursor += 1
        cursor = max(cursor, begin + 1)
        if soft and cursor < len(costs):
            cursor = _soft_boundary(text, start + begin, start + cursor) - start
        pieces.append(Piece(start + begin, start + cursor))
        begin = cursor
    return pieces


_SOFT = frozenset(" \t\n。！？；，、：.!?;,:)）】」』")


def _soft_boundary(text: str, begin: int, end: int) -> int:
    """The last position in the final fifth of [begin, end) just after a space or punctuation; else ``end``."""
    floor = end - max(1, (end - begin) // 5)
    for position in range(end, floor, -1):
        if text[position - 1] in _SOFT:
            return position
    return end


def enforce_size(text: str, pieces: Sequence[Piece], size: int, counter: TokenCounter = count_tokens) -> list[Piece]:
    """Any piece still over ``size`` tokens (a run with no delimiter at all) is cut by tokens."""
    result: list[Piece] = []
    for piece in pieces:
        if counter(text[piece.start : piece.end]) > size:
            result.extend(cut_by_tokens(text, piece.start, piece.end, size))
        else:
            result.append(piece)
    return result


def with_overlap(text: str, pieces: Sequence[Piece], overlap: int) -> list[Piece]:
    """Each piece also starts up to ``overlap`` tokens into the text before it (never before the previous
    piece's start), moved forward to a word or sentence boundary so it does not open mid-word."""
    if overlap <= 0:
        return list(pieces)
    result: list[Piece] = []
    for index, piece in enumerate(pieces):
        if index == 0:
            result.append(piece)
            continue
        floor = pieces[index - 1].start
        used, start = 0.0, piece.start
        while start > floor and used < overlap:
            start -= 1
            used += 1.0 if is_han(text[start]) else 0.25
        if start > floor:
            start = _next_boundary(text, start, piece.start)
        while start < piece.start and text[start].isspace():
            start += 1
        result.append(Piece(start, piece.end, own_start=piece.start))
    return result


def _next_boundary(text: str, start: int, limit: int) -> int:
    for position in range(start, limit):
        if text[position] in _SOFT:
            return position + 1
    return limit


def finish(text: str, pieces: Iterable[Piece], size: ChunkSize) -> list[Piece]:
    """The last steps every chunker shares: trim, cap the size, add overlap."""
    return with_overlap(text, enforce_size(text, trimmed(text, pieces), size.size), size.overlap)
