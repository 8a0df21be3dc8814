"""Deterministic stand-ins for plugin authors and our own tests.

They exercise the seams (embedding identity, reindex, provider failure) without a model. The
real bundled embedder is what the product and most tests use.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np

from memstrata.errors import ProviderError
from memstrata.lexical import keyword_tokens
from memstrata.providers.protocol import Vectors, normalise_rows


class HashingEmbedder:
    """Bag of hashed keyword tokens: texts sharing words get similar vectors. Not multilingual."""

    def __init__(self, dims: int = 64, model_id: str = "hashing-test") -> None:
        self.dims = dims
        self.model_id = model_id
        self.calls = 0

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        rows = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in keyword_tokens(text) or [text]:
                digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
                rows[row, int.from_bytes(digest, "little") % self.dims] += 1.0
            rows[row, 0] += 1e-3  # never all-zero
        return normalise_rows(rows, expected_rows=len(texts), dims=self.dims, source=self.model_id)


class FailingEmbedder(HashingEmbedder):
    """Raises like an embedding service that is down."""

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        raise ProviderError("embedding service unavailable (FailingEmbedder)")


class ManualClock:
    """An injectable clock that only moves when told to: ``Memory(..., clock=clock)``."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now
