"""Embedding with a persistent cache keyed by (embedding identity, text hash); the hash holds the tenant.

Re-adding a text, importing an export or re-running a benchmark then costs no model time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from memstrata.indexing import text_hash
from memstrata.providers.protocol import Embedder, Vectors, embedding_identity


class VectorCache(Protocol):
    def cached_vectors(self, embedding_id: str, text_hashes: Sequence[str]) -> dict[str, Vectors]: ...


@dataclass(frozen=True)
class Embedded:
    vectors: Vectors  # one row per input text, in order
    new_cache_entries: list[tuple[str, Vectors]]  # (text hash, vector) to store with the same write


def embed_with_cache(embedder: Embedder, cache: VectorCache, texts: Sequence[str], tenant_id: str | None) -> Embedded:
    """Vectors for ``texts`` in order, embedding only the texts the cache holds no vector for in ``tenant_id``.

    New cache entries are returned rather than written, so the caller stores them in the same
    transaction as the vectors (one write per add, not two).
    """
    if not texts:
        return Embedded(np.zeros((0, embedder.dims), dtype=np.float32), [])
    identity = embedding_identity(embedder)
    digests = [text_hash(text, tenant_id) for text in texts]
    known = cache.cached_vectors(identity, digests)
    missing = list(dict.fromkeys(d for d in digests if d not in known))
    new_entries: list[tuple[str, Vectors]] = []
    if missing:
        text_of = dict(zip(digests, texts, strict=True))
        fresh = embedder.embed_batch([text_of[d] for d in missing])
        new_entries = list(zip(missing, fresh, strict=True))
        known.update(new_entries)
    return Embedded(np.stack([known[d] for d in digests]).astype(np.float32, copy=False), new_entries)
