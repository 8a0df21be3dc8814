"""Markdown-structure chunks: one section per chunk, split further only when a section is too long.

A chunk never spans two headings, so the heading path recorded with it (see ``markdown.HeadingIndex``)
describes all of its text. A heading with no text of its own before the next heading joins that next
section rather than becoming a chunk that says nothing.
"""

from __future__ import annotations

import itertools

from memstrata.knowledge.chunking.base import ChunkSize, Piece, SplitResult, finish
from memstrata.knowledge.chunking.recursive import RecursiveChunker
from memstrata.knowledge.markdown import headings
from memstrata.knowledge.tokens import count_tokens


def sections(text: str) -> list[Piece]:
    """Spans from each heading to the next (the text before the first heading is a section too)."""
    starts = [0, *(h.offset for h in headings(text) if h.offset > 0), len(text)]
    spans = [Piece(a, b) for a, b in itertools.pairwise(starts) if b > a]
    merged: list[Piece] = []
    pending: int | None = None  # start of heading-only sections waiting for a body
    for span in spans:
        body = text[span.start : span.end].split("\n", 1)
        heading_only = text[span.start] == "#" and (len(body) == 1 or not body[1].strip())
        start = span.start if pending is None else pending
        if heading_only and span.end < len(text):
            pending = start
            continue
        merged.append(Piece(start, span.end))
        pending = None
    return merged


def _heading_lines_end(text: str, section: Piece) -> int:
    """Where the heading lines that open a section end (several when heading-only sections were merged)."""
    position = section.start
    while position < section.end and text.startswith("#", position):
        newline = text.find("\n", position, section.end)
        position = section.end if newline == -1 else newline + 1
        while position < section.end and text[position] in " \t\n":
            position += 1
    return position


class StructureChunker:
    name = "structure"

    def __init__(self, size: ChunkSize | None = None) -> None:
        self.size = size or ChunkSize()
        self._inner: dict[int, RecursiveChunker] = {}

    def _inner_spans(self, text: str, section: Piece) -> list[Piece]:
        """A long section split inside; its heading lines stay with the first piece (the inner chunker
        gets a size smaller by their tokens), so no chunk is a bare heading."""
        body_start = _heading_lines_end(text, section)
        heading_tokens = count_tokens(text[section.start : body_start])
        budget = self.size.size - heading_tokens
        if body_start >= section.end or budget < self.size.size // 2:
            return self._chunker(self.size.size).spans(text[section.start : section.end], section.start)
        pieces = self._chunker(budget).spans(text[body_start : section.end], body_start)
        return [Piece(section.start, pieces[0].end), *pieces[1:]] if pieces else [section]

    def _chunker(self, size: int) -> RecursiveChunker:
        if size not in self._inner:
            self._inner[size] = RecursiveChunker(ChunkSize(size=size, overlap=0))
        return self._inner[size]

    def split(self, text: str) -> SplitResult:
        pieces: list[Piece] = []
        for section in sections(text):
            fits = count_tokens(text[section.start : section.end]) <= self.size.size
            inside = [section] if fits else self._inner_spans(text, section)
            pieces.extend(finish(text, inside, self.size))  # overlap stays inside the section
        return SplitResult(pieces)
