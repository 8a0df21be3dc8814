"""The scale benchmark's view of a store: insert (texts, vectors), search, size on disk, close.

memstrata is driven through ``Memory.add`` / ``Memory.search`` with a :class:`PresetEmbedder`
that serves the same precomputed vectors every other store receives. Every store holds all
points in one scope (user "bench") and every search is scoped to it, as memstrata always is;
the vector stores are also timed without the filter (``search_unscoped``). Row ``i`` carries the
metadata ``topic = i % 10``; ``search_filtered`` adds ``topic == 3`` (a tenth of the rows) to the scope.
``raw-numpy`` (an exact float32 scan) and ``raw-usearch`` (an in-memory int8 HNSW graph, no storage) are the
limits a store adds its costs to.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from bench.embedders import PresetEmbedder, Vectors, fact_index_texts

SCOPE = "bench"
TOPICS = 10
FILTER_TOPIC = 3


def topic(row: int) -> int:
    return row % TOPICS


class StoreAdapter(Protocol):
    name: str
    notes: str

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None: ...

    def search(self, query: str, vector: Vectors, k: int) -> int: ...

    def close(self) -> None: ...


def dir_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class MemstrataStore:
    name = "memstrata"
    notes = "Memory.add(list of texts, user_id) in batches of 10,000; Memory.search(limit=10, record_access=False)"

    def __init__(self, workdir: Path, model_id: str, *, keyword_cache: bool = True) -> None:
        from memstrata import Memory
        from memstrata.config import load_settings
        from memstrata.storage.sqlite.store import SQLiteStore

        if not keyword_cache:  # the same store, keyword search always by FTS5 (the in-memory copy off)
            self.name = "memstrata-fts5"
            self.notes = "as memstrata, with store.keyword_cache_min_rows above every size: FTS5 ranks keywords"
        self.path, self.keyword_cache = workdir / "memstrata.db", keyword_cache
        self.embedder = PresetEmbedder(model_id)
        min_rows = 20_000 if keyword_cache else 10**12
        self._open = lambda: Memory(
            SQLiteStore(self.path, keyword_cache_min_rows=min_rows),
            self.embedder,
            settings=load_settings({"store": {"path": str(self.path)}}),
        )
        self.memory = self._open()
        from memstrata.query import Filters
        from memstrata.types import Scope

        self._scope, self._filters = Scope(user_id=SCOPE), Filters()

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        self.embedder.provide(fact_index_texts(texts), vectors)
        rows = [{"text": t, "metadata": {"topic": topic(start + i), "row": start + i}} for i, t in enumerate(texts)]
        self.memory.add(rows, user_id=SCOPE)
        self.embedder.provide([], vectors[:0])  # drop the batch: only query vectors stay resident

    def bulk_insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        """The store's write path directly (one WriteBatch of memories and vectors), for sizes where Memory.add's
        per-text work (validation, dedupe lookups, history) would not finish on this machine; labelled as such."""
        from memstrata.storage.protocol import WriteBatch
        from memstrata.types import MemoryItem, new_id, utcnow

        now = utcnow()
        items = [
            MemoryItem(id=new_id(), scope=self._scope, kind="fact", text=text, created_at=now, updated_at=now,
                       valid_from=now, metadata={"topic": topic(start + i), "row": start + i})
            for i, text in enumerate(texts)
        ]  # fmt: skip
        pairs = list(zip([item.id for item in items], vectors, strict=True))
        self.memory.store.write(WriteBatch(inserts=items, vectors=pairs, embedding_id=f"{self.embedder.model_id}:512"))

    def prepare_queries(self, texts: Sequence[str], vectors: Vectors) -> None:
        self.embedder.keep(dict(zip(texts, vectors, strict=True)))

    def ready(self) -> None:
        """Wait for the vector graph the inserts started building and the in-memory keyword index (timed
        separately by the worker)."""
        self.memory.store.wait_for_vector_index()  # type: ignore[attr-defined]
        self.memory.store.wait_for_keyword_index()  # type: ignore[attr-defined]

    def search(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.memory.search(query, user_id=SCOPE, limit=k, record_access=False))

    def search_filtered(self, query: str, vector: Vectors, k: int) -> int:
        found = self.memory.search(query, user_id=SCOPE, limit=k, filters={"metadata": {"topic": FILTER_TOPIC}})
        return len(found)

    def search_dense(self, query: str, vector: Vectors, k: int) -> int:
        """The store's vector search alone (what the vector stores below do): no keywords, fusion or hydration."""
        return len(self.memory.store.vector_search(self._scope, vector, self._filters, k))

    def dense_rows(self, vector: Vectors, k: int) -> list[int]:
        hits = self.memory.store.vector_search(self._scope, vector, self._filters, k)
        items = {item.id: item for item in self.memory.store.get(self._scope, [h.memory_id for h in hits])}
        return [int(items[h.memory_id].metadata["row"]) for h in hits]

    def reopen(self) -> None:
        self.memory.close()
        self.memory = self._open()

    def close(self) -> None:
        self.memory.close()


class ChromaStore:
    name = "chromadb"
    notes = "PersistentClient, HNSW cosine (defaults), add() in batches of the client's max batch size"

    def __init__(self, workdir: Path) -> None:
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        import chromadb
        from chromadb.config import Settings

        self.path = workdir / "chroma"
        self.client = chromadb.PersistentClient(path=str(self.path), settings=Settings(anonymized_telemetry=False))
        self.collection = self.client.create_collection(
            "bench", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None
        )
        self.batch = self.client.get_max_batch_size()

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        for lo in range(0, len(texts), self.batch):
            hi = min(lo + self.batch, len(texts))
            self.collection.add(
                ids=[str(start + i) for i in range(lo, hi)],
                embeddings=vectors[lo:hi],
                documents=list(texts[lo:hi]),
                metadatas=[{"user_id": SCOPE, "topic": topic(start + i)} for i in range(lo, hi)],
            )

    def search(self, query: str, vector: Vectors, k: int) -> int:
        found = self.collection.query(query_embeddings=[vector], n_results=k, where={"user_id": SCOPE})
        return len(found["ids"][0])

    def search_unscoped(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.collection.query(query_embeddings=[vector], n_results=k)["ids"][0])

    def search_filtered(self, query: str, vector: Vectors, k: int) -> int:
        where = {"$and": [{"user_id": SCOPE}, {"topic": FILTER_TOPIC}]}
        return len(self.collection.query(query_embeddings=[vector], n_results=k, where=where)["ids"][0])

    def close(self) -> None:
        """chromadb's PersistentClient has no close(); its files are flushed on every add."""


class QdrantLocalStore:
    name = "qdrant-local"
    notes = "QdrantClient(path=...) local mode, cosine, upsert in batches of 1,000, payload user_id + text"

    def __init__(self, workdir: Path) -> None:
        from qdrant_client import QdrantClient, models

        self.models = models
        self.path = workdir / "qdrant"
        self.client = QdrantClient(path=str(self.path))
        self.client.create_collection(
            "bench", vectors_config=models.VectorParams(size=512, distance=models.Distance.COSINE)
        )
        user = models.FieldCondition(key="user_id", match=models.MatchValue(value=SCOPE))
        chosen = models.FieldCondition(key="topic", match=models.MatchValue(value=FILTER_TOPIC))
        self.scope = models.Filter(must=[user])
        self.filtered = models.Filter(must=[user, chosen])

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        for lo in range(0, len(texts), 1000):
            hi = min(lo + 1000, len(texts))
            self.client.upsert(
                "bench",
                points=self.models.Batch(
                    ids=list(range(start + lo, start + hi)),
                    vectors=vectors[lo:hi].tolist(),
                    payloads=[
                        {"user_id": SCOPE, "text": t, "topic": topic(start + lo + i)}
                        for i, t in enumerate(texts[lo:hi])
                    ],
                ),
            )

    def search(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.client.query_points("bench", query=vector.tolist(), limit=k, query_filter=self.scope).points)

    def search_unscoped(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.client.query_points("bench", query=vector.tolist(), limit=k).points)

    def search_filtered(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.client.query_points("bench", query=vector.tolist(), limit=k, query_filter=self.filtered).points)

    def close(self) -> None:
        self.client.close()


class _PresetMem0Embedder:
    """mem0's embedder interface (embed / embed_batch) over the precomputed vectors."""

    def __init__(self, preset: PresetEmbedder) -> None:
        self.preset = preset

    def embed(self, text: str, memory_action: str | None = None) -> list[float]:
        return [float(x) for x in self.preset.embed_batch([text])[0]]

    def embed_batch(self, texts: list[str], memory_action: str | None = None) -> list[list[float]]:
        return self.preset.embed_batch(texts).tolist()


class Mem0Store:
    name = "mem0"
    notes = (
        "mem0ai OSS Memory, add(messages, user_id, infer=False) 1,000 messages per call; vector store qdrant local "
        "(mem0's default); embedder replaced by the precomputed vectors; keyword BM25 off (needs fastembed, which "
        "downloads a model) and entity boost off (spaCy not installed); telemetry off"
    )

    def __init__(self, workdir: Path) -> None:
        os.environ["MEM0_TELEMETRY"] = "false"
        os.environ.setdefault("MEM0_DIR", str(workdir / "mem0-home"))
        from mem0 import Memory

        self.path = workdir / "mem0"
        self.preset = PresetEmbedder("preset")
        offline_key = {"api_key": "sk-offline-not-used"}  # infer=False: the LLM is never called
        config: dict[str, Any] = {
            "vector_store": {
                "provider": "qdrant",
                "config": {"path": str(self.path / "qdrant"), "embedding_model_dims": 512, "collection_name": "bench"},
            },
            "llm": {"provider": "openai", "config": offline_key},
            "embedder": {"provider": "openai", "config": {**offline_key, "embedding_dims": 512}},
            "history_db_path": str(self.path / "history.db"),
        }
        self.memory = Memory.from_config(config)
        self.memory.embedding_model = _PresetMem0Embedder(self.preset)

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        self.preset.provide(texts, vectors)
        for lo in range(0, len(texts), 1000):
            batch = [{"role": "user", "content": t} for t in texts[lo : lo + 1000]]
            self.memory.add(batch, user_id=SCOPE, infer=False)
        self.preset.provide([], vectors[:0])

    def prepare_queries(self, texts: Sequence[str], vectors: Vectors) -> None:
        self.preset.keep(dict(zip(texts, vectors, strict=True)))

    def search(self, query: str, vector: Vectors, k: int) -> int:
        found = self.memory.search(query, filters={"user_id": SCOPE}, top_k=k, threshold=0.0)
        return len(found.get("results", [])) if isinstance(found, dict) else len(found)

    def close(self) -> None:
        self.memory.close()


class LanceStore:
    name = "lancedb"
    notes = "lancedb.connect(dir), one table, add() per batch; no ANN index (flat scan), where(..., prefilter=True)"

    def __init__(self, workdir: Path) -> None:
        import lancedb

        self.path = workdir / "lance"
        self.db = lancedb.connect(str(self.path))
        self.table: Any = None

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        import pyarrow as pa

        data = pa.table({
            "id": pa.array(range(start, start + len(texts)), pa.int64()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), vectors.shape[1]),
            "text": pa.array(list(texts)),
            "user_id": pa.array([SCOPE] * len(texts)),
            "topic": pa.array([topic(start + i) for i in range(len(texts))], pa.int32()),
        })  # fmt: skip
        if self.table is None:
            self.table = self.db.create_table("bench", data)
        else:
            self.table.add(data)

    def _query(self, vector: Vectors, k: int, where: str | None) -> int:
        search = self.table.search(vector).metric("cosine").limit(k)
        if where:
            search = search.where(where, prefilter=True)
        return len(search.to_list())

    def search(self, query: str, vector: Vectors, k: int) -> int:
        return self._query(vector, k, f"user_id = '{SCOPE}'")

    def search_unscoped(self, query: str, vector: Vectors, k: int) -> int:
        return self._query(vector, k, None)

    def search_filtered(self, query: str, vector: Vectors, k: int) -> int:
        return self._query(vector, k, f"user_id = '{SCOPE}' AND topic = {FILTER_TOPIC}")

    def close(self) -> None:
        """lancedb writes on every add; nothing to close."""


class RawNumpy:
    name = "raw-numpy"
    notes = "the limit for an exact scan: one float32 matrix in memory, matrix @ query, argpartition; no storage"

    def __init__(self, workdir: Path) -> None:
        self.path = workdir / "raw-numpy"  # nothing is written: disk 0
        self.path.mkdir()
        self.matrix = np.zeros((0, 512), dtype=np.float32)
        self.topics = np.zeros(0, dtype=np.int32)

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        self.matrix = np.concatenate([self.matrix, vectors.astype(np.float32)])
        self.topics = np.concatenate([self.topics, [topic(start + i) for i in range(len(texts))]]).astype(np.int32)

    def _top(self, matrix: Vectors, vector: Vectors, k: int) -> int:
        scores = matrix @ vector
        k = min(k, scores.size)
        return int(np.argpartition(-scores, k - 1)[:k].size) if k else 0

    def search(self, query: str, vector: Vectors, k: int) -> int:
        return self._top(self.matrix, vector, k)

    def search_filtered(self, query: str, vector: Vectors, k: int) -> int:
        return self._top(self.matrix[self.topics == FILTER_TOPIC], vector, k)

    def close(self) -> None:
        """Nothing held outside memory."""


class RawUsearch:
    name = "raw-usearch"
    notes = "the limit for a graph: usearch HNSW over int8 rows in memory (memstrata's parameters); no storage"

    def __init__(self, workdir: Path) -> None:
        from memstrata.storage.ann import _new_index

        self.path = workdir / "raw-usearch"
        self.path.mkdir()
        self.index = _new_index(512)
        self.topics = np.zeros(0, dtype=np.int32)

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        from memstrata.storage.compact_rows import quantize

        self.index.add(np.arange(start, start + len(texts), dtype=np.uint64), quantize(vectors), threads=2)
        self.topics = np.concatenate([self.topics, [topic(start + i) for i in range(len(texts))]]).astype(np.int32)

    def search(self, query: str, vector: Vectors, k: int) -> int:
        from memstrata.storage.compact_rows import quantize

        return len(self.index.search(quantize(vector)[0], k, threads=1).keys)

    def search_filtered(self, query: str, vector: Vectors, k: int) -> int:
        from memstrata.storage.compact_rows import quantize

        keys = self.index.search(quantize(vector)[0], k * 10 + 16, threads=1).keys
        return int(min(k, np.count_nonzero(self.topics[keys.astype(np.int64)] == FILTER_TOPIC)))

    def close(self) -> None:
        """Nothing held outside memory."""


def make_store(name: str, workdir: Path, model_id: str) -> Any:
    if name == "memstrata":
        return MemstrataStore(workdir, model_id)
    if name == "memstrata-fts5":
        return MemstrataStore(workdir, model_id, keyword_cache=False)
    if name == "chromadb":
        return ChromaStore(workdir)
    if name == "qdrant-local":
        return QdrantLocalStore(workdir)
    if name == "mem0":
        return Mem0Store(workdir)
    if name == "lancedb":
        return LanceStore(workdir)
    if name == "raw-numpy":
        return RawNumpy(workdir)
    if name == "raw-usearch":
        return RawUsearch(workdir)
    raise ValueError(f"unknown store {name!r}")
