"""The read path: route -> retrieve (key, keyword, dense) -> fuse -> hydrate -> threshold.

Each step is a small function over a :class:`SearchQuery`; the store applies scope and filters
inside every retrieval query.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memstrata.errors import ProviderError
from memstrata.lexical import keyword_tokens
from memstrata.providers.protocol import Embedder
from memstrata.query import SearchQuery, looks_like_key
from memstrata.read.fuse import max_rrf, rrf
from memstrata.storage.protocol import ScoredId, Store
from memstrata.types import MemoryItem, ScoreBreakdown, SearchHit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retrieved:
    keyword: list[ScoredId]
    dense: list[ScoredId]


@dataclass(frozen=True)
class ReadSettings:
    candidates: int = 50
    rrf_k: int = 60


def exact_key_hit(store: Store, query: SearchQuery) -> MemoryItem | None:
    """A query that *is* a namespaced key (``project:db:engine``) is answered by exact lookup first."""
    if not looks_like_key(query.text):
        return None
    item = store.find_by_key(query.scope, query.text)
    if item is None or item.status not in query.filters.status:
        return None
    if query.filters.kind and item.kind not in query.filters.kind:
        return None
    return item


def retrieve(store: Store, embedder: Embedder, query: SearchQuery, candidates: int) -> Retrieved:
    limit = max(candidates, query.limit)
    keyword = store.keyword_search(query.scope, keyword_tokens(query.text), query.filters, limit)
    try:
        vector = embedder.embed_batch([query.text])[0]
    except ProviderError as exc:
        # An embedding outage degrades search to keyword-only instead of failing it; the log says so
        # and every hit's breakdown shows no vector rank.
        log.warning("dense retrieval skipped, keyword results only: %s", exc)
        return Retrieved(keyword=keyword, dense=[])
    dense = store.vector_search(query.scope, vector, query.filters, limit)
    return Retrieved(keyword=keyword, dense=dense)


def fuse(retrieved: Retrieved, rrf_k: int) -> list[tuple[str, ScoreBreakdown]]:
    fused = rrf(
        {
            "keyword": [hit.memory_id for hit in retrieved.keyword],
            "dense": [hit.memory_id for hit in retrieved.dense],
        },
        k=rrf_k,
    )
    keyword = {hit.memory_id: (rank, hit.score) for rank, hit in enumerate(retrieved.keyword, start=1)}
    dense = {hit.memory_id: (rank, hit.score) for rank, hit in enumerate(retrieved.dense, start=1)}
    scale = max_rrf(2, rrf_k)
    ranked = []
    for memory_id, score in fused.items():
        keyword_rank, keyword_score = keyword.get(memory_id, (None, None))
        vector_rank, similarity = dense.get(memory_id, (None, None))
        ranked.append(
            (
                memory_id,
                ScoreBreakdown(
                    keyword_rank=keyword_rank,
                    keyword_score=keyword_score,
                    vector_rank=vector_rank,
                    vector_similarity=similarity,
                    fused=score / scale,
                ),
            )
        )
    return ranked


def passes_threshold(breakdown: ScoreBreakdown, threshold: float | None) -> bool:
    """``threshold`` is a minimum cosine similarity; keyword-only hits have none and are dropped."""
    if threshold is None or breakdown.key_match:
        return True
    return breakdown.vector_similarity is not None and breakdown.vector_similarity >= threshold


def search(store: Store, embedder: Embedder, query: SearchQuery, settings: ReadSettings) -> list[SearchHit]:
    hits: list[SearchHit] = []
    key_item = exact_key_hit(store, query)
    if key_item is not None:
        hits.append(SearchHit(memory=key_item, score=1.0, breakdown=ScoreBreakdown(key_match=True, fused=1.0)))
    ranked = [
        (memory_id, breakdown)
        for memory_id, breakdown in fuse(retrieve(store, embedder, query, settings.candidates), settings.rrf_k)
        if passes_threshold(breakdown, query.threshold) and (key_item is None or memory_id != key_item.id)
    ][: query.limit - len(hits)]
    items = {item.id: item for item in store.get(query.scope, [memory_id for memory_id, _ in ranked])}
    hits.extend(
        SearchHit(memory=items[memory_id], score=breakdown.fused, breakdown=breakdown)
        for memory_id, breakdown in ranked
        if memory_id in items
    )
    return hits
