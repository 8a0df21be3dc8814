"""What a collection holds now, read back from its chunk memories (phase A: no sources table yet).

Each live chunk names its source and the source's hash, so grouping the live chunks of a collection
gives the indexed state the planner compares against. This reads every chunk of the collection; the
``sources`` table planned for phase B makes it one indexed query.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from memstrata.knowledge.records import KNOWLEDGE
from memstrata.query import Filters, ListQuery
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, Scope

_PAGE = 5000


@dataclass(frozen=True)
class IndexedSource:
    source: str
    source_hash: str  # "" when its chunks disagree (an interrupted older write): treated as changed
    chunks: tuple[MemoryItem, ...]
    title: str
    format: str


def knowledge_chunks(store: Store, scope: Scope, collection: str | None = None) -> Iterator[MemoryItem]:
    """Live knowledge chunks of ``scope`` (exactly that scope), of one collection or all, oldest first."""
    metadata = {"collection": collection} if collection is not None else {}
    filters = Filters(kind=(KNOWLEDGE,), metadata=metadata)
    offset = 0
    while batch := store.list_memories(
        ListQuery(scope=scope, filters=filters, limit=_PAGE, offset=offset, order_by="created_at", descending=False)
    ):
        yield from (item for item in batch if item.scope == scope)
        offset += len(batch)


def indexed_sources(store: Store, scope: Scope, collection: str) -> dict[str, IndexedSource]:
    grouped: dict[str, list[MemoryItem]] = defaultdict(list)
    for item in knowledge_chunks(store, scope, collection):
        source = item.metadata.get("source")
        if isinstance(source, str):
            grouped[source].append(item)
    result = {}
    for source, items in grouped.items():
        hashes = {str(item.metadata.get("source_hash", "")) for item in items}
        first = items[0].metadata
        result[source] = IndexedSource(
            source=source,
            source_hash=hashes.pop() if len(hashes) == 1 else "",
            chunks=tuple(sorted(items, key=lambda item: int(item.metadata.get("chunk", 0)))),
            title=str(first.get("title", "")),
            format=str(first.get("format", "")),
        )
    return result


@dataclass(frozen=True)
class CollectionSummary:
    name: str
    sources: int
    chunks: int
    tokens: int
    formats: dict[str, int]


def collections(store: Store, scope: Scope) -> list[CollectionSummary]:
    sources: dict[str, set[str]] = defaultdict(set)
    chunks: dict[str, int] = defaultdict(int)
    tokens: dict[str, int] = defaultdict(int)
    formats: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for item in knowledge_chunks(store, scope):
        name = str(item.metadata.get("collection", ""))
        source = str(item.metadata.get("source", ""))
        if source not in sources[name]:
            formats[name][str(item.metadata.get("format", "?"))] += 1
        sources[name].add(source)
        chunks[name] += 1
        tokens[name] += int(item.metadata.get("tokens", 0))
    return [
        CollectionSummary(name, len(sources[name]), chunks[name], tokens[name], dict(formats[name]))
        for name in sorted(sources)
    ]
