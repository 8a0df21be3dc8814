"""The scale benchmark's view of a store: insert (texts, vectors), search, size on disk, close.

memstrata is driven through ``Memory.add`` / ``Memory.search`` with a :class:`PresetEmbedder`
that serves the same precomputed vectors every other store receives. Every store holds all
points in one scope (user "bench") and every search is scoped to it, as memstrata always is;
chroma and qdrant are also timed without the filter (``search_unscoped``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from bench.embedders import PresetEmbedder, Vectors

SCOPE = "bench"


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

    def __init__(self, workdir: Path, model_id: str) -> None:
        from memstrata import Memory
        from memstrata.config import load_settings
        from memstrata.storage.sqlite.store import SQLiteStore

        self.path = workdir / "memstrata.db"
        self.embedder = PresetEmbedder(model_id)
        self._open = lambda: Memory(
            SQLiteStore(self.path), self.embedder, settings=load_settings({"store": {"path": str(self.path)}})
        )
        self.memory = self._open()

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        self.embedder.provide(texts, vectors)
        self.memory.add(list(texts), user_id=SCOPE)
        self.embedder.provide([], vectors[:0])  # drop the batch: only query vectors stay resident

    def prepare_queries(self, texts: Sequence[str], vectors: Vectors) -> None:
        self.embedder.keep(dict(zip(texts, vectors, strict=True)))

    def search(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.memory.search(query, user_id=SCOPE, limit=k, record_access=False))

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
                metadatas=[{"user_id": SCOPE}] * (hi - lo),
            )

    def search(self, query: str, vector: Vectors, k: int) -> int:
        found = self.collection.query(query_embeddings=[vector], n_results=k, where={"user_id": SCOPE})
        return len(found["ids"][0])

    def search_unscoped(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.collection.query(query_embeddings=[vector], n_results=k)["ids"][0])

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
        self.scope = models.Filter(must=[models.FieldCondition(key="user_id", match=models.MatchValue(value=SCOPE))])

    def insert(self, start: int, texts: Sequence[str], vectors: Vectors) -> None:
        for lo in range(0, len(texts), 1000):
            hi = min(lo + 1000, len(texts))
            self.client.upsert(
                "bench",
                points=self.models.Batch(
                    ids=list(range(start + lo, start + hi)),
                    vectors=vectors[lo:hi].tolist(),
                    payloads=[{"user_id": SCOPE, "text": t} for t in texts[lo:hi]],
                ),
            )

    def search(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.client.query_points("bench", query=vector.tolist(), limit=k, query_filter=self.scope).points)

    def search_unscoped(self, query: str, vector: Vectors, k: int) -> int:
        return len(self.client.query_points("bench", query=vector.tolist(), limit=k).points)

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


def make_store(name: str, workdir: Path, model_id: str) -> Any:
    if name == "memstrata":
        return MemstrataStore(workdir, model_id)
    if name == "chromadb":
        return ChromaStore(workdir)
    if name == "qdrant-local":
        return QdrantLocalStore(workdir)
    if name == "mem0":
        return Mem0Store(workdir)
    raise ValueError(f"unknown store {name!r}")
