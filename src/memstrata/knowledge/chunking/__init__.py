"""Five ways to cut a document, behind one protocol (``Chunker.split(text) -> SplitResult``).

=========  ==============================================  ======================  =================
name       cuts at                                         needs                   built on
=========  ==============================================  ======================  =================
fixed      every N tokens                                  nothing                 memstrata
recursive  headings, paragraphs, lines, sentences, clauses nothing                 chonkie
structure  Markdown sections (then recursive inside)       nothing                 memstrata+chonkie
semantic   drops in adjacent-sentence similarity           the embedder            chonkie
agentic    topic changes the chat model points at          a chat model            chonkie
=========  ==============================================  ======================  =================
"""

from __future__ import annotations

from typing import Literal, get_args

from memstrata.errors import InvalidInputError
from memstrata.knowledge.chunking.base import Chunker, ChunkSize, Piece, SplitResult
from memstrata.providers.llm import ChatModel
from memstrata.providers.protocol import Embedder

ChunkerName = Literal["fixed", "recursive", "structure", "semantic", "agentic"]
CHUNKER_NAMES: tuple[str, ...] = get_args(ChunkerName)


def make_chunker(
    name: str, size: ChunkSize | None = None, *, embedder: Embedder | None = None, model: ChatModel | None = None
) -> Chunker:
    """The chunker called ``name``; ``semantic`` needs the embedder and ``agentic`` a chat model."""
    size = size or ChunkSize()
    if name == "fixed":
        from memstrata.knowledge.chunking.fixed import FixedChunker

        return FixedChunker(size)
    if name == "recursive":
        from memstrata.knowledge.chunking.recursive import RecursiveChunker

        return RecursiveChunker(size)
    if name == "structure":
        from memstrata.knowledge.chunking.structure import StructureChunker

        return StructureChunker(size)
    if name == "semantic":
        if embedder is None:
            raise InvalidInputError("the semantic chunker needs an embedder")
        from memstrata.knowledge.chunking.semantic import SemanticChunker

        return SemanticChunker(embedder, size)
    if name == "agentic":
        if model is None:
            raise InvalidInputError(
                "the agentic chunker needs a chat model: configure llm (see `memstrata doctor`) or install "
                "memstrata[local]; or choose another chunker"
            )
        from memstrata.knowledge.chunking.agentic import AgenticChunker

        return AgenticChunker(model, size)
    raise InvalidInputError(f"unknown chunker {name!r}; choose one of {', '.join(CHUNKER_NAMES)}")


__all__ = ["CHUNKER_NAMES", "ChunkSize", "Chunker", "ChunkerName", "Piece", "SplitResult", "make_chunker"]
