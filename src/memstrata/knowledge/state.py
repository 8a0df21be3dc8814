"""What a collection holds now, read from the sources table (``store.knowledge``) in one query.

The planner needs only each live source's hash; the chunk memories of a source are read only when that
source is replaced or retired (their ids go into the same WriteBatch that supersedes them), so planning
an unchanged corpus reads one row per source and no chunk at all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from memstrata.knowledge.records import KNOWLEDGE
from memstrata.query import Filters, ListQuery
from memstrata.storage.knowledge_protocol import CollectionCounts, SourceSummary
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, MemoryStatus, Scope

_PAGE = 5000
CollectionSummary = CollectionCounts  # phase A's name, kept for callers


@dataclass(frozen=True)
class IndexedSource:
    summary: SourceSummary

    @property
    def source(self) -> str:
        return self.summary.source

    @property
    def source_hash(self) -> str:
        return self.summary.source_hash


def knowledge_chunks(
    store: Store, scope: Scope, collection: str | None = None, source: str | None = None
) -> Iterator[MemoryItem]:
    """Live knowledge chunks of exactly ``scope``, of one collection (and source) or all, oldest first."""
    metadata: dict[str, str] = {}
    if collection is not None:
        metadata["collection"] = collection
    if source is not None:
        metadata["source"] = source
    filters = Filters(kind=(KNOWLEDGE,), metadata=metadata, status=(MemoryStatus.ACTIVE,))
    offset = 0
    while batch := store.list_memories(
        ListQuery(scope=scope, filters=filters, limit=_PAGE, offset=offset, order_by="created_at", descending=False)
    ):
        yield from (item for item in batch if item.scope == scope)
        offset += len(batch)


def source_chunks(store: Store, scope: Scope, collection: str, source: str) -> list[MemoryItem]:
    """The live chunks of one source, in document order."""
    found = knowledge_chunks(store, scope, collection, source)
    return sorted(found, key=lambda item: int(item.metadata.get("chunk", 0)))


def indexed_sources(
    store: Store, scope: Scope, collection: str, *, prefix: str | None = None
) -> dict[str, IndexedSource]:
    """Live sources of a collection (optionally under a path prefix), by source: one indexed query."""
    return {
        summary.source: IndexedSource(summary) for summary in store.knowledge.sources(scope, collection, prefix=prefix)
    }


def unrecorded_sources(
    store: Store, scope: Scope, collection: str, indexed: dict[str, IndexedSource]
) -> dict[str, list[MemoryItem]]:
    """Live chunks whose source has no row in the sources table (ingested before the table existed), by
    source. One COUNT decides: only when more chunks are live than the table accounts for are the chunks
    read, so a store written with source rows pays nothing for this."""
    accounted = sum(known.summary.chunks for known in indexed.values())
    filters = Filters(kind=(KNOWLEDGE,), metadata={"collection": collection})
    if store.count(scope, filters) <= accounted:
        return {}
    found: dict[str, list[MemoryItem]] = defaultdict(list)
    for item in knowledge_chunks(store, scope, collection):
        source = item.metadata.get("source")
        if isinstance(source, str) and source not in indexed:
            found[source].append(item)
    return dict(found)


def collections(store: Store, scope: Scope) -> list[CollectionCounts]:
    return store.knowledge.collections(scope)
