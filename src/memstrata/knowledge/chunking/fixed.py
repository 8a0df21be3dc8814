"""Fixed-size chunks: every N tokens, no regard for structure. The cheap baseline of the comparison."""

from __future__ import annotations

from memstrata.knowledge.chunking.base import ChunkSize, SplitResult, cut_by_tokens, trimmed, with_overlap


class FixedChunker:
    name = "fixed"

    def __init__(self, size: ChunkSize | None = None) -> None:
        self.size = size or ChunkSize()

    def split(self, text: str) -> SplitResult:
        pieces = trimmed(text, cut_by_tokens(text, 0, len(text), self.size.size, soft=False))
        return SplitResult(with_overlap(text, pieces, self.size.overlap))
