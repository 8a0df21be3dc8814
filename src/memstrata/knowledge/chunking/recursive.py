"""Recursive chunks: cut at headings, then paragraphs, lines, sentences, clauses, spaces, as needed.

Built on chonkie's ``RecursiveChunker`` (maintained, offsets into the source, merging of small splits
in Rust) with memstrata's bilingual delimiter levels and token estimate. chonkie's stock rules know
only Western punctuation, and semchunk (also compared) cuts a Chinese paragraph at the spaces around
embedded English words instead of after 。, so neither is used as shipped (measured in bench/chunkers.py).
"""

from __future__ import annotations

from typing import Any, cast

from memstrata.knowledge.chunking.base import BILINGUAL, ChunkSize, Delimiters, Piece, SplitResult, finish
from memstrata.knowledge.tokens import count_tokens


def recursive_rules(delimiters: Delimiters = BILINGUAL) -> Any:
    """chonkie rules for the bilingual levels. A heading delimiter opens the next split (it belongs to the
    section it titles); every other delimiter closes the split before it."""
    from chonkie import RecursiveLevel, RecursiveRules

    levels = [
        RecursiveLevel(delimiters=list(group), include_delim="next" if name == "headings" else "prev")
        for name, group in zip(delimiters.levels, delimiters.ordered(), strict=True)
    ]
    # Last resort before the size guard: spaces between words (chonkie cannot cut by token without an encoder).
    levels.append(RecursiveLevel(whitespace=True))
    return RecursiveRules(levels=levels)


class RecursiveChunker:
    name = "recursive"

    def __init__(self, size: ChunkSize | None = None, delimiters: Delimiters = BILINGUAL) -> None:
        from chonkie import RecursiveChunker as ChonkieRecursive

        self.size = size or ChunkSize()
        self._chonkie = ChonkieRecursive(
            tokenizer=cast(Any, count_tokens),  # chonkie wraps a plain counter callable in its own tokenizer
            chunk_size=self.size.size,
            rules=recursive_rules(delimiters),
            min_characters_per_chunk=8,
        )

    def spans(self, text: str, offset: int = 0) -> list[Piece]:
        """Raw spans (no overlap yet) of ``text``, shifted by ``offset``: reused inside sections."""
        if not text.strip():
            return []
        return [Piece(offset + c.start_index, offset + c.end_index) for c in self._chonkie.chunk(text)]

    def split(self, text: str) -> SplitResult:
        return SplitResult(finish(text, self.spans(text), self.size))
