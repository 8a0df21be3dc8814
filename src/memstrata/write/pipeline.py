"""The LLM write path for one batch of jobs of one scope:
turns -> vectors for their episodes -> extract (per role) -> drop exact duplicates -> neighbours ->
reconcile -> plan -> one transaction that applies every decision *and* marks the jobs done.

A model failure marks the jobs failed with the error and the raw output; nothing is half-applied
and nothing is silently dropped. The raw turns were committed before any of this ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from memstrata.config import GraphSettings
from memstrata.errors import ProviderError
from memstrata.graph.plan import GraphPlan
from memstrata.indexing import content_hash, index_text
from memstrata.lifecycle.timeparse import find_time_span
from memstrata.providers.cache import Embedded
from memstrata.query import Filters
from memstrata.storage.protocol import JobUpdate, Store, Vector, WriteBatch
from memstrata.types import Job, JobStatus, MemoryItem, MemoryKind, MemoryStatus, Message, Scope
from memstrata.write.apply import Gate, plan_writes
from memstrata.write.decisions import Extraction, NewFact
from memstrata.write.extract import CallStats, Extractor
from memstrata.write.graph_step import plan_graph_step
from memstrata.write.reconcile import Reconciler, split_exact_duplicates

EmbedTexts = Callable[[Sequence[str]], Embedded]


@dataclass(frozen=True)
class WriteDeps:
    store: Store
    embed_texts: EmbedTexts  # through the embedding cache
    embedding_id: str
    extractor: Extractor
    reconciler: Reconciler
    clock: Callable[[], datetime]
    gate: Gate = field(default_factory=Gate)
    graph: GraphSettings = field(default_factory=GraphSettings)
    neighbours_per_fact: int = 5
    max_neighbours: int = 20


def process_jobs(deps: WriteDeps, jobs: Sequence[Job]) -> None:
    """Run one claimed batch (all jobs share a scope); record success or failure on every job."""
    scope = jobs[0].scope
    started = time.perf_counter()
    stats = CallStats()
    try:
        turns = [stored.message for stored in deps.store.messages_by_id(scope, _message_ids(jobs))]
        episodes = _embed_pending_episodes(deps, jobs)
        extraction = _extract(deps, turns, stats)
        facts = extraction.facts
        home = long_term_scope(scope)
        resolved, fresh = split_exact_duplicates(facts, _live_duplicates(deps.store, home, facts))
        vectors = _TextVectors(deps)
        existing = _neighbours(deps, home, [vectors.get(fact.text) for fact in fresh])
        resolved += deps.reconciler.reconcile(fresh, existing, stats)
        planned = plan_writes(resolved, home, deps.clock(), actor=deps.extractor.name, gate=deps.gate)
        graph = _plan_graph(deps, home, extraction, turns, [*planned.new_items, *episodes], vectors)
        result = {
            "decisions": planned.summary,
            "turns": len(turns),
            "facts": len(facts),
            "extractor": deps.extractor.name,
            "reconciler": deps.reconciler.name,
            "model_calls": stats.model_calls,
            "attempts": stats.attempts,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "model_seconds": round(stats.seconds, 3),
            "graph": graph.summary,
            "seconds": round(time.perf_counter() - started, 3),
        }
        done = [_update(job, JobStatus.DONE, deps.clock(), result=result) for job in jobs]
        batch = replace(
            planned.batch,
            job_updates=done,
            history=[*planned.batch.history, *graph.history],
            entities=graph.entities,
            entity_vectors=graph.entity_vectors,
            relations=graph.relations,
        )
        deps.store.write(replace(batch, **vectors.batch_fields(planned.new_items)))
    except ProviderError as exc:
        raw = getattr(exc, "raw_outputs", None) or stats.raw_outputs
        failed = [
            _update(job, JobStatus.FAILED, deps.clock(), error=str(exc), raw_output="\n---\n".join(raw)[-20_000:])
            for job in jobs
        ]
        deps.store.write(WriteBatch(job_updates=failed))


class _TextVectors:
    """Embeds each distinct text once per job and collects the new cache entries for the final write."""

    def __init__(self, deps: WriteDeps) -> None:
        self._deps = deps
        self._vectors: dict[str, Vector] = {}
        self._cache_entries: list[tuple[str, Vector]] = []

    def _ensure(self, texts: Sequence[str]) -> None:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            embedded = self._deps.embed_texts(missing)
            self._vectors.update(zip(missing, embedded.vectors, strict=True))
            self._cache_entries += embedded.new_cache_entries

    def get(self, text: str) -> Vector:
        self._ensure([text])
        return self._vectors[text]

    def many(self, texts: Sequence[str]) -> list[Vector]:
        self._ensure(texts)
        return [self._vectors[text] for text in texts]

    def batch_fields(self, items: Sequence[MemoryItem]) -> dict[str, Any]:
        self._ensure([index_text(item) for item in items])
        return {
            "vectors": [(item.id, self._vectors[index_text(item)]) for item in items],
            "embedding_id": self._deps.embedding_id,
            "cache_entries": self._cache_entries,
        }


def _update(job: Job, status: JobStatus, at: datetime, **fields: object) -> JobUpdate:
    return JobUpdate(job.id, status, at, expected_attempts=job.attempts, **fields)  # type: ignore[arg-type]


def long_term_scope(scope: Scope) -> Scope:
    """Facts outlive the session they were said in: with a user or agent to own them, they are stored
    (and reconciled) without the session id; the episodes keep it as provenance."""
    if scope.session_id is None or (scope.user_id is None and scope.agent_id is None):
        return scope
    return scope.model_copy(update={"session_id": None})


def _message_ids(jobs: Sequence[Job]) -> list[str]:
    return [message_id for job in jobs for message_id in job.message_ids]


def _embed_pending_episodes(deps: WriteDeps, jobs: Sequence[Job]) -> list[MemoryItem]:
    """Episodes of infer=True turns were stored without vectors so add() could return at once."""
    episode_ids = [str(i) for job in jobs for i in job.result.get("episode_ids", [])]
    episodes = deps.store.get(jobs[0].scope, episode_ids)
    missing = [item for item in episodes if item.embedding_id is None]
    if missing:
        vectors = _TextVectors(deps)
        deps.store.write(WriteBatch(**vectors.batch_fields(missing)))
    return episodes


def _extract(deps: WriteDeps, turns: Sequence[Message], stats: CallStats) -> Extraction:
    today = turns[-1].timestamp if turns else deps.clock()
    found = Extraction()
    for role in ("user", "assistant"):  # different prompts: users describe themselves, assistants commit
        said = [turn for turn in turns if turn.role == role]
        found += deps.extractor.extract(said, role=role, today=today, stats=stats)
    by_id = {turn.id: turn for turn in turns}
    return Extraction([_with_event_time(fact, by_id) for fact in found.facts], found.relations)


def _plan_graph(
    deps: WriteDeps,
    home: Scope,
    extraction: Extraction,
    turns: Sequence[Message],
    memories: Sequence[MemoryItem],
    vectors: _TextVectors,
) -> GraphPlan:
    return plan_graph_step(
        store=deps.store,
        settings=deps.graph,
        scope=home,
        triples=extraction.relations,
        turns=turns,
        memories=memories,
        embed=vectors.many,
        embedding_id=deps.embedding_id,
        now=deps.clock(),
        actor=deps.extractor.name,
    )


def _with_event_time(fact: NewFact, turns: dict[str, Message]) -> NewFact:
    """Resolve "yesterday" / "上周五" against the timestamp of the turn that said it (event vs record time)."""
    if fact.event_time:
        return fact
    for message_id in fact.message_ids:
        turn = turns.get(message_id)
        if turn is None:
            continue
        span = find_time_span(fact.text, turn.timestamp) or find_time_span(turn.content, turn.timestamp)
        if span is not None:
            return replace(fact, event_time=span.start.isoformat())
    return fact


def _live_duplicates(store: Store, scope: Scope, facts: Sequence[NewFact]) -> dict[str, MemoryItem]:
    known: dict[str, MemoryItem] = {}
    for fact in facts:
        digest = content_hash(fact.text)
        matches = [item for item in store.find_by_hash(scope, digest) if item.kind != MemoryKind.EPISODE]
        if matches:
            known[digest] = matches[0]
    return known


def _neighbours(deps: WriteDeps, scope: Scope, fact_vectors: Sequence[Vector]) -> list[MemoryItem]:
    """Similar live memories (not episodes) for all facts, best first, deduplicated, capped."""
    # Pending memories are neighbours too: saying a pending fact again is what promotes it.
    filters = Filters(exclude_kind=(MemoryKind.EPISODE.value,), status=(MemoryStatus.ACTIVE, MemoryStatus.PENDING))
    ranked: dict[str, float] = {}
    for vector in fact_vectors:
        for hit in deps.store.vector_search(scope, vector, filters, deps.neighbours_per_fact):
            ranked[hit.memory_id] = max(ranked.get(hit.memory_id, -1.0), hit.score)
    best = sorted(ranked, key=ranked.__getitem__, reverse=True)[: deps.max_neighbours]
    return deps.store.get(scope, best)
