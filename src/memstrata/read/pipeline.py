"""The read path: route -> retrieve (key, keyword, dense, time) -> fuse -> hydrate -> lifecycle -> cut.

Each step is a small function over a :class:`SearchQuery`; the store applies scope and filters
inside every retrieval query.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from memstrata.config import GraphSettings, LifecycleSettings
from memstrata.errors import ProviderError
from memstrata.graph.retrieve import GraphHit, graph_hits
from memstrata.lexical import keyword_tokens
from memstrata.lifecycle.decay import adjusted_score, lifecycle_factors
from memstrata.lifecycle.timeparse import TimeSpan, find_time_span
from memstrata.providers.protocol import Embedder
from memstrata.query import SearchQuery, TimeRange, looks_like_key
from memstrata.read.fuse import max_rrf, rrf
from memstrata.storage.protocol import ScoredId, Store, Vector
from memstrata.types import MemoryItem, ScoreBreakdown, SearchHit

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retrieved:
    keyword: list[ScoredId]
    dense: list[ScoredId]
    in_time_range: list[ScoredId] = field(default_factory=list)
    graph: list[GraphHit] = field(default_factory=list)


@dataclass(frozen=True)
class ReadSettings:
    candidates: int = 100
    rrf_k: int = 20
    keyword_weight: float = 1.0
    dense_weight: float = 0.5
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)


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


def query_time_span(query: SearchQuery) -> TimeSpan | None:
    return find_time_span(query.text, query.now) if query.understand_time else None


def _embed_query(embedder: Embedder, text: str) -> Vector | None:
    try:
        vector: Vector = embedder.embed_batch([text])[0]
        return vector
    except ProviderError as exc:
        # An embedding outage degrades search to keyword-only instead of failing it; the log says so
        # and every hit's breakdown shows no vector rank.
        log.warning("dense retrieval skipped, keyword results only: %s", exc)
        return None


def retrieve_graph(store: Store, query: SearchQuery, settings: GraphSettings) -> list[GraphHit]:
    """Memories the edges around the query's entities point at, kept only if they pass the query's filters.
    Filters on other columns (metadata, key, time ranges) are the store's job: the graph list sits out then."""
    if not (settings.enabled and query.graph) or query.filters.needs_row_filter():
        return []
    hits = graph_hits(store, query.scope, query.text, hops=settings.hops, max_relations=settings.max_relations)
    items = {item.id: item for item in store.get(query.scope, [hit.memory_id for hit in hits])}
    filters = query.filters
    return [
        hit for hit in hits
        if (item := items.get(hit.memory_id)) is not None
        and item.status in filters.status
        and (filters.kind is None or item.kind in filters.kind)
        and item.kind not in filters.exclude_kind
    ]  # fmt: skip


def retrieve(
    store: Store, embedder: Embedder, query: SearchQuery, settings: ReadSettings, span: TimeSpan | None
) -> Retrieved:
    limit = max(settings.candidates, query.limit)
    keyword = store.keyword_search(query.scope, keyword_tokens(query.text), query.filters, limit)
    graph = retrieve_graph(store, query, settings.graph)
    vector = _embed_query(embedder, query.text)
    if vector is None:
        return Retrieved(keyword=keyword, dense=[], graph=graph)
    dense = store.vector_search(query.scope, vector, query.filters, limit)
    in_range: list[ScoredId] = []
    if span is not None:  # a third list: the most similar memories whose event lies in the named range
        timed = query.filters.model_copy(update={"event_time": TimeRange(gte=span.start, lt=span.end)})
        in_range = store.vector_search(query.scope, vector, timed, limit)
    return Retrieved(keyword=keyword, dense=dense, in_time_range=in_range, graph=graph)


def fuse(retrieved: Retrieved, settings: ReadSettings) -> list[tuple[str, ScoreBreakdown]]:
    lists = {
        "keyword": [hit.memory_id for hit in retrieved.keyword],
        "dense": [hit.memory_id for hit in retrieved.dense],
    }
    if retrieved.in_time_range:
        lists["time"] = [hit.memory_id for hit in retrieved.in_time_range]
    if retrieved.graph:
        lists["graph"] = [hit.memory_id for hit in retrieved.graph]
    weights = {
        "keyword": settings.keyword_weight,
        "dense": settings.dense_weight,
        "time": settings.dense_weight,
        "graph": settings.graph.weight,
    }
    fused = rrf(lists, k=settings.rrf_k, weights=weights)
    keyword = {hit.memory_id: (rank, hit.score) for rank, hit in enumerate(retrieved.keyword, start=1)}
    dense = {hit.memory_id: (rank, hit.score) for rank, hit in enumerate(retrieved.dense, start=1)}
    timed = {hit.memory_id: rank for rank, hit in enumerate(retrieved.in_time_range, start=1)}
    graphed = {hit.memory_id: (rank, hit) for rank, hit in enumerate(retrieved.graph, start=1)}
    graph_weight = settings.graph.weight if retrieved.graph else 0.0
    # The time list is a bonus on top: scores may exceed 1 inside a named range.
    scale = max_rrf(settings.keyword_weight + settings.dense_weight + graph_weight, settings.rrf_k)
    ranked = []
    for memory_id, score in fused.items():
        keyword_rank, keyword_score = keyword.get(memory_id, (None, None))
        vector_rank, similarity = dense.get(memory_id, (None, None))
        graph_rank, graph_hit = graphed.get(memory_id, (None, None))
        breakdown = ScoreBreakdown(
            keyword_rank=keyword_rank,
            keyword_score=keyword_score,
            vector_rank=vector_rank,
            vector_similarity=similarity,
            time_rank=timed.get(memory_id),
            graph_rank=graph_rank,
            graph_hop=graph_hit.hop if graph_hit else None,
            graph_relation=graph_hit.relation if graph_hit else None,
            fused=score / scale,
            final=score / scale,
        )
        ranked.append((memory_id, breakdown))
    return ranked


def passes_threshold(breakdown: ScoreBreakdown, threshold: float | None) -> bool:
    """``threshold`` is a minimum cosine similarity; keyword-only hits have none and are dropped."""
    if threshold is None or breakdown.key_match:
        return True
    return breakdown.vector_similarity is not None and breakdown.vector_similarity >= threshold


def _rescore(item: MemoryItem, breakdown: ScoreBreakdown, query: SearchQuery, settings: LifecycleSettings,
             span: TimeSpan | None) -> ScoreBreakdown:  # fmt: skip
    """Lifecycle and time adjustments on top of relevance; every factor stays visible in the breakdown."""
    factors = lifecycle_factors(item, query.now, settings) if query.lifecycle else None
    score = adjusted_score(breakdown.fused, factors, settings.weight) if factors else breakdown.fused
    boost = 1.0
    if span is not None and item.event_time is not None and span.start <= item.event_time < span.end:
        boost = 1.0 + settings.time_boost
    return breakdown.model_copy(update={"lifecycle": factors, "time_boost": boost, "final": score * boost})


def search(store: Store, embedder: Embedder, query: SearchQuery, settings: ReadSettings) -> list[SearchHit]:
    hits: list[SearchHit] = []
    key_item = exact_key_hit(store, query)
    if key_item is not None:
        breakdown = ScoreBreakdown(key_match=True, fused=1.0, final=1.0)
        hits.append(SearchHit(memory=key_item, score=1.0, breakdown=breakdown))
    span = query_time_span(query)
    ranked = [
        (memory_id, breakdown)
        for memory_id, breakdown in fuse(retrieve(store, embedder, query, settings, span), settings)
        if passes_threshold(breakdown, query.threshold) and (key_item is None or memory_id != key_item.id)
    ]
    # Lifecycle can reorder, so rescore a few more candidates than will be returned.
    pool = ranked[: max(query.limit * 3, 30)]
    items = {item.id: item for item in store.get(query.scope, [memory_id for memory_id, _ in pool])}
    rescored = [
        SearchHit(memory=items[memory_id], score=final.final, breakdown=final)
        for memory_id, breakdown in pool
        if memory_id in items
        for final in [_rescore(items[memory_id], breakdown, query, settings.lifecycle, span)]
    ]
    rescored.sort(key=lambda hit: hit.score, reverse=True)
    return hits + rescored[: query.limit - len(hits)]
