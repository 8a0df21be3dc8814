"""Dense-only baseline: the same embedder as memstrata, exact cosine similarity in numpy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.systems import Doc


class Dense:
    name = "dense"

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder
        self._indexes: dict[str, tuple[np.ndarray, list[str]]] = {}

    def index(self, scope: str, docs: Sequence[Doc]) -> None:
        vectors = self.embedder.embed_batch([doc.text for doc in docs])
        self._indexes[scope] = (np.asarray(vectors, dtype=np.float32), [doc.doc_id for doc in docs])

    def search(self, scope: str, query: str, k: int) -> list[str]:
        matrix, ids = self._indexes[scope]
        scores = matrix @ self.embedder.embed_batch([query])[0]
        order = np.argsort(-scores, kind="stable")[: min(k, len(ids))]
        return [ids[i] for i in order]
