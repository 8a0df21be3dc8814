"""Writing knowledge through the existing store: one document = one all-or-nothing WriteBatch.

The batch holds the source row (its stable Markdown), the new chunk memories, their vectors and
embedding-cache entries, their history, and (for a changed source) the retired previous source row and
the status change that supersedes every old chunk. So a reader sees the
old version or the new one, never half of either; a crash mid-document leaves the old state, and
the next run redoes that document only. Vectors are computed before the write (through the store's
embedding cache, in batches that report progress), so a chunk is never stored unsearchable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from memstrata.errors import EmbeddingMismatchError
from memstrata.knowledge.state import source_chunks
from memstrata.providers.cache import Embedded, embed_with_cache
from memstrata.providers.protocol import Embedder, Vectors, embedding_identity
from memstrata.records.history import history_event
from memstrata.storage.knowledge_protocol import SourceRecord, SourceStatus
from memstrata.storage.protocol import StatusChange, Store, WriteBatch
from memstrata.types import HistoryAction, HistoryEvent, MemoryItem, MemoryStatus, Scope, utcnow

OnEmbedded = Callable[[int], None]


@dataclass
class EmbedStats:
    texts: int = 0
    from_cache: int = 0
    batches: int = 0


class KnowledgeWriter:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        actor: str = "ingest",
        batch_size: int = 32,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.clock = clock
        self.embedder = embedder
        self.actor = actor
        self.batch_size = batch_size
        self.embedding_id = embedding_identity(embedder)
        self.stats = EmbedStats()

    def check_embedder(self) -> None:
        stored = self.store.embedding_id()
        if stored is not None and stored != self.embedding_id:
            raise EmbeddingMismatchError(stored=stored, configured=self.embedding_id)

    def embed(self, texts: Sequence[str], tenant_id: str | None, on_embedded: OnEmbedded | None = None) -> Embedded:
        """Vectors for ``texts`` in order (the tenant's cache first) and the cache entries to store with them."""
        vectors: list[Vectors] = []
        entries: list[tuple[str, Vectors]] = []
        for begin in range(0, len(texts), self.batch_size):
            batch = texts[begin : begin + self.batch_size]
            embedded = embed_with_cache(self.embedder, self.store, batch, tenant_id)
            vectors.append(embedded.vectors)
            entries.extend(embedded.new_cache_entries)
            self.stats.batches += 1
            self.stats.texts += len(batch)
            self.stats.from_cache += len(batch) - len(embedded.new_cache_entries)
            if on_embedded is not None:
                on_embedded(len(batch))
        stacked = np.concatenate(vectors) if vectors else np.zeros((0, self.embedder.dims), dtype=np.float32)
        return Embedded(stacked, entries)

    def write_document(
        self,
        items: Sequence[MemoryItem],
        *,
        source: SourceRecord,
        replaces: Sequence[MemoryItem] = (),
        previous: SourceRecord | None = None,
        reason: str,
        on_embedded: OnEmbedded | None = None,
    ) -> None:
        """Insert a document's source row and chunks (and retire its previous version with its chunks) in one
        transaction."""
        vectors = self.embed([item.text for item in items], source.scope.tenant_id, on_embedded)
        now = items[0].created_at if items else self.clock()
        history = [
            history_event(item, HistoryAction.ADD, at=now, actor=self.actor, reason=reason, details=_details(item))
            for item in items
        ]
        changes, closing = self._closing(replaces, MemoryStatus.SUPERSEDED, reason)
        self.store.write(
            WriteBatch(
                inserts=list(items),
                history=history + closing,
                status_changes=changes,
                vectors=[(item.id, vector) for item, vector in zip(items, vectors.vectors, strict=True)],
                embedding_id=self.embedding_id,
                cache_entries=vectors.new_cache_entries,
                sources=[source, *self._retired([previous] if previous else [])],
            )
        )

    def retire(self, items: Sequence[MemoryItem], *, sources: Sequence[SourceRecord] = (), reason: str) -> None:
        """Sources that are gone and their chunks: they leave search in one transaction; history keeps the
        chunks' text and the retired source rows keep the Markdown."""
        changes, history = self._closing(items, MemoryStatus.DELETED, reason)
        batch = WriteBatch(status_changes=changes, history=history, sources=self._retired(sources))
        if not batch.is_empty():
            self.store.write(batch)

    def retire_source(self, scope: Scope, collection: str, source: str, *, reason: str) -> int:
        """One live source and its chunks out of search, in one transaction; the number of chunks retired."""
        record = self.store.knowledge.source(scope, collection, source)
        chunks = source_chunks(self.store, scope, collection, source)
        self.retire(chunks, sources=[record] if record else [], reason=reason)
        return len(chunks)

    def _retired(self, sources: Sequence[SourceRecord]) -> list[SourceRecord]:
        now = self.clock()
        return [
            record.model_copy(update={"status": SourceStatus.RETIRED, "retired_at": now, "updated_at": now})
            for record in sources
        ]

    def _closing(
        self, items: Sequence[MemoryItem], status: MemoryStatus, reason: str
    ) -> tuple[list[StatusChange], list[HistoryEvent]]:
        now = self.clock()
        changes = [StatusChange(item.id, item.scope, status, now) for item in items]
        history = [
            history_event(item, HistoryAction.DELETE, at=now, actor=self.actor, reason=reason, details=_details(item))
            for item in items
        ]
        return changes, history


def _details(item: MemoryItem) -> dict[str, Any]:
    return {
        "source": item.metadata.get("source"),
        "source_hash": item.metadata.get("source_hash"),
        "collection": item.metadata.get("collection"),
        "span": list(item.provenance.span) if item.provenance.span else None,
    }
