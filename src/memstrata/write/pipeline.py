"""The LLM write path for one batch of jobs of one scope:
turns -> vectors for their episodes -> extract -> per fact, in the order it was said: its own candidates ->
the judge's answer per pair -> the engine's checked decision -> one transaction that applies every decision
*and* marks the jobs done.

Any exception marks the jobs failed with the error and the raw model output; a batch that fails is retried
job by job, so one poison job never takes the good jobs queued beside it down with it. Nothing is
half-applied and nothing is silently dropped: the raw turns were committed before any of this ran.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from typing import Any

import numpy as np

from memstrata.config import GraphSettings
from memstrata.errors import ConcurrentWriteError, ConflictError
from memstrata.graph.plan import GraphPlan
from memstrata.indexing import content_hash, index_text
from memstrata.providers.cache import Embedded
from memstrata.storage.protocol import JobUpdate, Store, Vector, WriteBatch
from memstrata.types import Job, JobStatus, MemoryItem, MemoryKind, MemoryStatus, Message, Scope
from memstrata.write.apply import Gate, PlannedWrites, Planner
from memstrata.write.candidates import CandidateFinder, CandidateRules
from memstrata.write.decide import DecideRules, content_length, decide, said_within, same_text
from memstrata.write.decisions import Extraction, NewFact, Noop, Resolved
from memstrata.write.evidence import content_words
from memstrata.write.extract import CallStats, Extractor
from memstrata.write.graph_step import plan_graph_step
from memstrata.write.progress import Progress, ProgressHook, Stage, quiet, safe
from memstrata.write.reconcile import Reconciler
from memstrata.write.users_clock import in_utc, on_the_users_clock

EmbedTexts = Callable[[Sequence[str], str | None], Embedded]  # texts, their tenant

log = logging.getLogger(__name__)

# Decisions made again when another writer stored one of a job's facts first (each time the fact it stored is
# found in the same words, with no model call); more means writers keep colliding, and the job fails visibly.
_WRITE_ATTEMPTS = 5


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
    candidates: CandidateRules = field(default_factory=CandidateRules)
    decide: DecideRules = field(default_factory=DecideRules)
    progress: ProgressHook = quiet
    timezone: tzinfo = UTC  # the users' zone (time.timezone): relative time in a turn names its days


def process_jobs(deps: WriteDeps, jobs: Sequence[Job]) -> None:
    """Run one claimed batch (all jobs share a scope); record success or failure on every job."""
    run = _Run(deps, jobs)
    try:
        run.execute()
    except Exception as exc:  # any failure, not only a model's: it must be recorded, never retried silently
        if len(jobs) > 1:
            log.warning("a batch of %d jobs failed (%s); running them one by one", len(jobs), exc)
            for job in jobs:
                process_jobs(deps, [job])
            return
        run.fail(exc)


class _Run:
    def __init__(self, deps: WriteDeps, jobs: Sequence[Job]) -> None:
        self.deps = deps
        self.jobs = jobs
        self.stats = CallStats()
        self.started = time.perf_counter()
        self.report = safe(deps.progress)

    def emit(self, stage: Stage, done: int, total: int, detail: str = "") -> None:
        seconds = time.perf_counter() - self.started
        self.report(Progress(stage, done, total, seconds, tuple(job.id for job in self.jobs), detail))

    def execute(self) -> None:
        deps, scope = self.deps, self.jobs[0].scope
        turns = [stored.message for stored in deps.store.messages_by_id(scope, _message_ids(self.jobs))]
        episodes = _embed_pending_episodes(deps, self.jobs)
        self._load_model()
        self.emit("extract", 0, len(turns))
        began = time.perf_counter()
        extraction = in_utc(deps.extractor.extract(on_the_users_clock(turns, deps.timezone), stats=self.stats))
        self.stats.timed("extract", began)
        self.emit("extract", len(turns), len(turns))
        vectors = _TextVectors(deps, long_term_scope(scope).tenant_id)
        for attempt in range(1, _WRITE_ATTEMPTS + 1):
            try:
                self._decide_and_write(turns, extraction, episodes, vectors)
                break
            except ConcurrentWriteError:  # another worker stored one of these facts first: decide again on it
                if attempt == _WRITE_ATTEMPTS:
                    raise
                ids = [job.id for job in self.jobs]
                log.info("jobs %s: a fact was stored meanwhile by another writer; deciding again", ids)
        self.emit("done", len(self.jobs), len(self.jobs))

    def _decide_and_write(
        self, turns: Sequence[Message], extraction: Extraction, episodes: Sequence[MemoryItem], vectors: _TextVectors
    ) -> None:
        deps = self.deps
        home = long_term_scope(self.jobs[0].scope)
        began = time.perf_counter()
        planned = self._decide(home, extraction.facts, vectors)
        self.stats.timed("decide", began)
        self.emit("write", 0, 1)
        began = time.perf_counter()
        graph = _plan_graph(deps, home, extraction, turns, [*planned.new_items, *episodes], vectors)
        result = self._result(turns, extraction, planned, graph)
        done = [_update(job, JobStatus.DONE, deps.clock(), result=result) for job in self.jobs]
        batch = replace(
            planned.batch,
            job_updates=done,
            history=[*planned.batch.history, *graph.history],
            entities=graph.entities,
            entity_vectors=graph.entity_vectors,
            relations=graph.relations,
        )
        deps.store.write(replace(batch, **vectors.batch_fields(planned.new_items)))
        self.stats.timed("write", began)

    def _load_model(self) -> None:
        """A local model loads on first use (seconds); say so instead of looking stuck."""
        model = getattr(self.deps.extractor, "model", None)
        if model is None or getattr(model, "loaded", True):
            return
        self.emit("load_model", 0, 0, "loading the local model")
        began = time.perf_counter()
        model.load()
        self.stats.timed("load_model", began)

    def _decide(self, home: Scope, facts: Sequence[NewFact], vectors: _TextVectors) -> PlannedWrites:
        """Each fact in the order it was said, against its own candidates; later facts see earlier decisions."""
        deps = self.deps
        planner = Planner(home, deps.clock(), deps.extractor.name, deps.gate)
        finder = CandidateFinder(deps.store, home, vectors.many, deps.candidates)
        # Within a turn the fuller facts first, so one that another says in full finds it (``_same_words``)
        ordered = sorted(
            enumerate(facts), key=lambda pair: (pair[1].said_at or planner.now, -content_length(pair[1].text), pair[0])
        )
        for done, (number, fact) in enumerate(ordered):
            planner.apply(self._resolve(fact, finder, planner, vectors), number)
            self.emit("judge", done + 1, len(ordered))
        return planner.planned()

    def _resolve(self, fact: NewFact, finder: CandidateFinder, planner: Planner, vectors: _TextVectors) -> Resolved:
        said = _same_words(fact, planner, self.deps.store, vectors.similarity)
        if said is not None:  # said before in the same words: no question needed
            return Noop(fact, *said)
        stored = [c for c in finder.stored(fact) if planner.is_live(c.item.id)]
        # Facts of earlier turns of this job; facts of the same turn never replace each other.
        earlier = [
            item for item in planner.live_inserts() if not set(item.provenance.message_ids) & set(fact.message_ids)
        ]
        candidates = sorted([*stored, *finder.earlier_in_batch(fact, earlier)], key=lambda c: -c.similarity)
        candidates = candidates[: self.deps.candidates.per_fact]
        if not candidates:  # nothing similar stored: stored without asking anyone
            return decide(fact, [], [], self.deps.decide)
        answers = self.deps.reconciler.judge([(fact, c.item) for c in candidates], self.stats)
        return decide(fact, candidates, _aligned(answers, len(candidates)), self.deps.decide)

    def _result(
        self, turns: Sequence[Message], extraction: Extraction, planned: PlannedWrites, graph: GraphPlan
    ) -> dict[str, Any]:
        stats = self.stats
        return {
            "decisions": planned.summary,
            "rejected": planned.rejected,
            "turns": len(turns),
            "facts": len(extraction.facts),
            "extractor": self.deps.extractor.name,
            "reconciler": self.deps.reconciler.name,
            "model_calls": stats.model_calls,
            "attempts": stats.attempts,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "model_seconds": round(stats.seconds, 3),
            "stages": stats.stages,
            "graph": graph.summary,
            "seconds": round(time.perf_counter() - self.started, 3),
        }

    def fail(self, exc: Exception) -> None:
        deps, stats = self.deps, self.stats
        raw = getattr(exc, "raw_outputs", None) or stats.raw_outputs
        error = f"{type(exc).__name__}: {exc}"
        log.warning("write job(s) %s failed: %s", [job.id for job in self.jobs], error)
        failed = [
            _update(job, JobStatus.FAILED, deps.clock(), error=error[:4000], raw_output="\n---\n".join(raw)[-20_000:])
            for job in self.jobs
        ]
        try:
            deps.store.write(WriteBatch(job_updates=failed))
        except ConflictError:  # another worker claimed the job again after our lease ran out: its run decides
            log.warning("job(s) %s were claimed again; this worker's failure is not recorded", len(self.jobs))
            return
        self.emit("failed", len(self.jobs), len(self.jobs), error[:200])


def _aligned(answers: Sequence[Any], count: int) -> list[Any]:
    """Exactly one answer per candidate: missing ones are None (no answer), extra ones are ignored."""
    return [*answers[:count], *([None] * (count - len(answers)))]


# How close in meaning a fact must be to a fuller one of the same turn that holds all its words, to be that fact
# said again (the bundled USE): "User's girlfriend Mei is a nurse" is 0.93 from "… works as a nurse", "User plans to
# visit Tokyo on Friday" 0.88 from "… next Friday with Mei"; one more of a kind stays below ("… allergic to
# penicillin" / "… to peanuts" 0.78, "has a dog named Max" / "has a cat named Max" 0.85).
RESTATED = 0.875


def _same_words(
    fact: NewFact, planner: Planner, store: Store, similarity: Callable[[str, str], float] | None = None
) -> tuple[MemoryItem, str] | None:
    """A live memory (planned in this job, or stored) with the same text up to case, width and punctuation, or an
    active fact of the same turn in this job that says it in full: the bundled model wrote "用户侄女小橙子下个月满一岁"
    and "用户侄女小橙子下个月满一岁想给她买个木头拼图" of one turn, and both were stored; and "User's girlfriend Mei
    works as a nurse" and "User's girlfriend Mei is a nurse" (a user trial): all its words, and close in meaning."""
    for item in planner.live_inserts():
        if same_text(fact.text, item.text):
            return item, "same text as a live memory"
        same_turn = set(item.provenance.message_ids) == set(fact.message_ids)
        fuller = same_turn and item.status == MemoryStatus.ACTIVE and item.kind != MemoryKind.EPISODE
        if fuller and (said_within(fact.text, item.text) or _restated(fact.text, item.text, similarity)):
            return item, "said in full by a fact of the same turn"
    # Pending memories too: saying a pending fact again in the same words is what promotes it.
    for item in store.find_by_hash(planner.scope, content_hash(fact.text), (MemoryStatus.ACTIVE, MemoryStatus.PENDING)):
        live = item.status in (MemoryStatus.ACTIVE, MemoryStatus.PENDING) and planner.is_live(item.id)
        if live and item.kind != MemoryKind.EPISODE:
            return item, "same text as a live memory"
    return None


def _restated(fact: str, fuller: str, similarity: Callable[[str, str], float] | None) -> bool:
    """Every word of ``fact`` in ``fuller``, and the two close in meaning (compared only then: it embeds them)."""
    words = content_words(fact)
    return (
        similarity is not None
        and bool(words)
        and words <= content_words(fuller)
        and similarity(fact, fuller) >= RESTATED
    )


class _TextVectors:
    """Embeds each distinct text once per job and collects the new cache entries for the final write."""

    def __init__(self, deps: WriteDeps, tenant_id: str | None) -> None:
        self._deps = deps
        self._tenant_id = tenant_id
        self._vectors: dict[str, Vector] = {}
        self._cache_entries: list[tuple[str, Vector]] = []

    def _ensure(self, texts: Sequence[str]) -> None:
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            embedded = self._deps.embed_texts(missing, self._tenant_id)
            self._vectors.update(zip(missing, embedded.vectors, strict=True))
            self._cache_entries += embedded.new_cache_entries

    def many(self, texts: Sequence[str]) -> list[Vector]:
        self._ensure(texts)
        return [self._vectors[text] for text in texts]

    def similarity(self, a: str, b: str) -> float:
        first, second = (np.asarray(vector, dtype=np.float32) for vector in self.many([a, b]))
        return float(first @ second / (np.linalg.norm(first) * np.linalg.norm(second) + 1e-9))

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
        vectors = _TextVectors(deps, jobs[0].scope.tenant_id)
        deps.store.write(WriteBatch(**vectors.batch_fields(missing)))
    return episodes


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
