"""Ranking: calibrated evidence for every candidate, fused into one relevance, then bounded lifecycle.

Pure functions over what retrieval returned and the texts of the memories read so far; the
pipeline does the store calls. Every number that decides a hit's place ends up in its
ScoreBreakdown.

Relevance needs a memory's text (its words, its script). Keyword matches are read before fusion;
a candidate only the dense or graph list found is first ranked as if it shared the query's script
and settled once it is read (:func:`pool`), so only candidates that can reach the top are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime

from memstrata.config import LifecycleSettings
from memstrata.graph.retrieve import GraphHit
from memstrata.lifecycle.decay import lifecycle_factors, lifecycle_multiplier
from memstrata.lifecycle.timeparse import TimeSpan
from memstrata.read.evidence import (
    cross_script,
    dense_evidence,
    keyword_coverage,
    keyword_evidence,
    memory_terms,
    query_terms,
    scripts,
    term_weights,
)
from memstrata.read.fuse import EvidenceWeights, graph_evidence, in_time_range, max_rrf, rrf, score_fusion
from memstrata.read.retrieve import Retrieved
from memstrata.read.settings import ReadSettings
from memstrata.types import MemoryItem, ScoreBreakdown


@dataclass(frozen=True, slots=True)
class MemoryText:
    """What ranking reads of a memory: the text the indexes saw (with speaker and preceding turns)
    for its words, and its own text for its script (context in another language is not its own)."""

    indexed: str
    own: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory some retriever found, with its evidence. ``cross_script`` is None until its text
    is known; until then relevance assumes the memory shares the query's script."""

    memory_id: str
    keyword_rank: int | None = None
    keyword_score: float | None = None
    keyword_match: float | None = None
    vector_rank: int | None = None
    similarity: float | None = None
    known_similarity: float | None = None  # the similarity, or its bound when the dense list left it out
    dense_match: float | None = None
    time_rank: int | None = None
    graph_rank: int | None = None
    graph_hit: GraphHit | None = None
    cross_script: bool | None = None
    relevance: float = 0.0
    fused: float = 0.0  # what the fusion orders by: relevance, or the rank fusion score for fusion="rrf"

    def settled(self) -> bool:
        return self.cross_script is not None

    def breakdown(self) -> ScoreBreakdown:
        return ScoreBreakdown(
            keyword_rank=self.keyword_rank,
            keyword_score=self.keyword_score,
            keyword_match=self.keyword_match,
            vector_rank=self.vector_rank,
            vector_similarity=self.similarity,
            dense_match=self.dense_match,
            cross_script=bool(self.cross_script),
            time_rank=self.time_rank,
            graph_rank=self.graph_rank,
            graph_hop=self.graph_hit.hop if self.graph_hit else None,
            graph_relation=self.graph_hit.relation if self.graph_hit else None,
            fused=self.fused,
            relevance=self.relevance,
        )


def _relevance(candidate: Candidate, settings: ReadSettings, weights: EvidenceWeights, cross: bool) -> float:
    hop = candidate.graph_hit.hop if candidate.graph_hit else None
    dense = candidate.dense_match or 0.0
    if cross and candidate.known_similarity is not None:
        # Standing alone, similarity must clear a higher floor: unrelated zh<->en pairs reach ~0.22.
        dense = dense_evidence(candidate.known_similarity, settings.dense_alone_floor, settings.dense_ceiling)
    graph = graph_evidence(hop, weights)
    return score_fusion(candidate.keyword_match or 0.0, dense, graph, weights, cross_script=cross)


def _rank_fusion(retrieved: Retrieved, settings: ReadSettings) -> dict[str, float]:
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
    graph_weight = settings.graph.weight if retrieved.graph else 0.0
    # The time list is a bonus on top: scores may exceed 1 inside a named range, so they are capped.
    scale = max_rrf(settings.keyword_weight + settings.dense_weight + graph_weight, settings.rrf_k)
    return {memory_id: min(1.0, score / scale) for memory_id, score in rrf(lists, settings.rrf_k, weights).items()}


def _gather(retrieved: Retrieved) -> list[Candidate]:
    """One candidate per memory any list found, with its rank (and raw score) in each list."""
    by_id: dict[str, Candidate] = {}

    def update(memory_id: str, **ranks: object) -> None:
        by_id[memory_id] = replace(by_id.get(memory_id) or Candidate(memory_id), **ranks)  # type: ignore[arg-type]

    for rank, hit in enumerate(retrieved.keyword, start=1):
        update(hit.memory_id, keyword_rank=rank, keyword_score=hit.score)
    for rank, hit in enumerate(retrieved.dense, start=1):
        update(hit.memory_id, vector_rank=rank, similarity=hit.score)
    for rank, hit in enumerate(retrieved.in_time_range, start=1):
        update(hit.memory_id, time_rank=rank)
    for rank, graphed in enumerate(retrieved.graph, start=1):
        update(graphed.memory_id, graph_rank=rank, graph_hit=graphed)
    return list(by_id.values())


class Ranker:
    """Evidence and relevance for one query's candidates (see the module docstring)."""

    def __init__(self, query_text: str, settings: ReadSettings) -> None:
        self.terms = query_terms(query_text)
        self.scripts = scripts(query_text)
        self.settings = settings
        self.weights = settings.evidence_weights()

    def candidates(self, retrieved: Retrieved, texts: Mapping[str, MemoryText]) -> list[Candidate]:
        """Every candidate, best first by the configured fusion. ``texts`` holds at least every keyword
        match: query words are weighted by how rare they are among those."""
        found = {
            hit.memory_id: memory_terms(texts[hit.memory_id].indexed)
            for hit in retrieved.keyword
            if hit.memory_id in texts
        }
        population = max(len(retrieved.dense), len(retrieved.keyword))
        weights = term_weights(self.terms, list(found.values()), population)
        best_keyword = retrieved.keyword[0].score if retrieved.keyword else 0.0
        bound = retrieved.dense_bound()
        settings = self.settings
        ranked = []
        for candidate in _gather(retrieved):
            # Left out of a full dense list means less similar than its last entry: that bound is used.
            known = candidate.similarity if candidate.similarity is not None else bound
            dense = None if known is None else dense_evidence(known, settings.dense_floor, settings.dense_ceiling)
            keyword = None
            if candidate.keyword_score is not None:
                coverage = keyword_coverage(weights, found.get(candidate.memory_id, frozenset()))
                keyword = keyword_evidence(coverage, candidate.keyword_score, best_keyword, dense)
            evidenced = replace(candidate, known_similarity=known, dense_match=dense, keyword_match=keyword)
            ranked.append(self.settle(evidenced, texts.get(candidate.memory_id)))
        if settings.fusion == "rrf":
            fused = _rank_fusion(retrieved, settings)
            ranked = [replace(c, fused=fused.get(c.memory_id, 0.0)) for c in ranked]
        ranked.sort(key=lambda c: c.fused, reverse=True)
        return ranked

    def settle(self, candidate: Candidate, text: MemoryText | None) -> Candidate:
        """The candidate's relevance once its text is known (``text=None``: not yet known)."""
        if candidate.settled():
            return candidate
        if text is None:
            relevance = _relevance(candidate, self.settings, self.weights, cross=False)
            return replace(candidate, relevance=relevance, fused=relevance)
        cross = cross_script(self.scripts, text.own)
        relevance = _relevance(candidate, self.settings, self.weights, cross=cross)
        fused = relevance if self.settings.fusion == "score" else candidate.fused
        return replace(candidate, cross_script=cross, relevance=relevance, fused=fused)


def pool(ranked: list[Candidate], size: int, most_similar: int) -> list[Candidate]:
    """The candidates worth reading: the best ``size`` by fused score, plus the ``most_similar``
    unread ones by dense evidence, which may turn out to be in another script than the query (a
    Chinese memory for an English question has no keyword evidence but can be the answer)."""
    chosen = ranked[:size]
    unread = sorted((c for c in ranked[size:] if not c.settled()), key=lambda c: c.dense_match or 0.0, reverse=True)
    return chosen + unread[:most_similar]


def rescore(
    item: MemoryItem,
    breakdown: ScoreBreakdown,
    *,
    now: datetime,
    use_lifecycle: bool,
    settings: LifecycleSettings,
    span: TimeSpan | None,
    gate: float,
) -> ScoreBreakdown:
    """A time range the query names raises relevance inside it (read/fuse.py); lifecycle then takes
    at most ``settings.weight`` of the score (lifecycle/decay.py), so it reorders only close calls."""
    relevance, fused, boost = breakdown.relevance, breakdown.fused, 1.0
    if span is not None and item.event_time is not None and span.start <= item.event_time < span.end:
        relevance = in_time_range(relevance, settings.time_boost, gate)
        fused = in_time_range(fused, settings.time_boost, gate)
        boost = 1.0 + settings.time_boost  # inside the range: the configured boost applied
    factors = lifecycle_factors(item, now, settings) if use_lifecycle else None
    multiplier = lifecycle_multiplier(factors, settings) if factors else 1.0
    return breakdown.model_copy(
        update={
            "relevance": relevance,
            "lifecycle": factors,
            "lifecycle_factor": multiplier,
            "time_boost": boost,
            "final": fused * multiplier,
        }
    )
