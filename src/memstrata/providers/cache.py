"""Embedding with a persistent cache keyed by (embedding identity, text hash).

Re-adding a text, importing an export or re-running a benchmark then costs no model time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from memstrata.indexing import text_hash
from memstrata.providers.protocol import Embedder, Vectors, embedding_identity


class VectorCache(Protocol):
    def cached_vectors(self, embedding_id: str, text_hashes: Sequence[str]) -> dict[str, Vectors]: ...

    def cache_vectors(self, embedding_id: str, items: Sequence[tuple[str, Vectors]]) -> None: ...


def embed_with_cache(embedder: Embedder, cache: VectorCache, texts: Sequence[str]) -> Vectors:
    """Vectors for ``texts`` in order, embedding only the texts the cache has not seen."""
    identity = embedding_identity(embedder)
    digests = [text_hash(text) for text in texts]
    known = cache.cached_vectors(identity, digests)
    missing = list(dict.fromkeys(d for d in digests if d not in known))
    if missing:
        text_of = dict(zip(digests, texts, strict=True))
        fresh = embedder.embed_batch([text_of[d] for d in missing])
        new_items = list(zip(missing, fresh, strict=True))
        cache.cache_vectors(identity, new_items)
        known.update(new_items)
    if not texts:
        return np.zeros((0, embedder.dims), dtype=np.float32)
    return np.stack([known[d] for d in digests]).astype(np.float32, copy=False)
