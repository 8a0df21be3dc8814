"""Semantic-similarity chunks: cut where adjacent sentences stop being about the same thing.

chonkie's ``SemanticChunker`` does the work (window-vs-sentence similarity, Savitzky-Golay smoothing,
minima as breakpoints, then size enforcement); memstrata supplies the configured embedder (the bundled
multilingual USE by default, so Chinese and English text are compared in one space), the bilingual
sentence delimiters and the token estimate. Oversized sentences are still cut by the shared size guard.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.knowledge.chunking.base import BILINGUAL, ChunkSize, Delimiters, Piece, SplitResult, finish
from memstrata.knowledge.tokens import count_tokens
from memstrata.providers.protocol import Embedder


def _chonkie_embeddings(embedder: Embedder) -> Any:
    """An adapter from memstrata's Embedder to chonkie's embeddings interface, counting texts embedded."""
    from chonkie.embeddings import BaseEmbeddings

    class Adapter(BaseEmbeddings):
        texts_embedded = 0

        def embed(self, text: str) -> np.ndarray:
            return self.embed_batch([text])[0]

        def embed_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
            self.texts_embedded += len(texts)
            return list(embedder.embed_batch(list(texts)))

        @property
        def dimension(self) -> int:
            return embedder.dims

        def get_tokenizer(self) -> Any:
            return count_tokens

        def similarity(self, u: np.ndarray, v: np.ndarray) -> np.float32:
            return np.float32(np.dot(u, v))  # the embedder returns L2-normalised rows

    return Adapter()


class SemanticChunker:
    name = "semantic"

    def __init__(
        self,
        embedder: Embedder,
        size: ChunkSize | None = None,
        *,
        threshold: float = 0.5,
        window: int = 3,
        delimiters: Delimiters = BILINGUAL,
    ) -> None:
        from chonkie import SemanticChunker as ChonkieSemantic

        self.size = size or ChunkSize()
        self._embeddings = _chonkie_embeddings(embedder)
        self._chonkie = ChonkieSemantic(
            embedding_model=self._embeddings,
            chunk_size=self.size.size,
            threshold=threshold,
            similarity_window=window,
            delim=[*delimiters.sentences, *delimiters.lines],
            min_characters_per_sentence=8,
        )

    def split(self, text: str) -> SplitResult:
        before = self._embeddings.texts_embedded
        raw = [Piece(c.start_index, c.end_index) for c in self._chonkie.chunk(text)] if text.strip() else []
        embedded = self._embeddings.texts_embedded - before
        return SplitResult(finish(text, raw, self.size), embedded_texts=embedded)
