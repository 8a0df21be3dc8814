"""Deep search: understand -> expand -> (search every query -> fuse -> evaluate)* -> rerank.

Round 1 searches the query as given, the real question, its sub-questions and the enabled expansions,
each through the one fast search path (scope and filters applied in the store, as always), and fuses
their hits on calibrated relevance (deep/fusion.py). The evaluator then judges the best hits; when it
finds them insufficient, its next query is searched and fused in. The loop stops when the evaluator is
satisfied, when a round brings no new memory into the top hits, or at the round limit (3 for chat, 5 for
agents by default). Every step and round is in the returned trace, which is also logged as one JSON line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, tzinfo

from memstrata.config import DeepSettings, RerankSettings
from memstrata.deep.evaluate import evaluate
from memstrata.deep.expand import expand
from memstrata.deep.fusion import WEIGHTS, Pool, message_weight
from memstrata.deep.rerank import rerank_hits
from memstrata.deep.trace import DeepTrace, ExpansionStep, Ledger, Origin, QueryRun, RoundTrace, StopReason, Verdict
from memstrata.deep.understand import understand
from memstrata.providers.llm import ChatModel
from memstrata.providers.rerank import Reranker
from memstrata.query import SearchQuery
from memstrata.timezones import local
from memstrata.types import Frozen, SearchHit

log = logging.getLogger("memstrata.deep")

Searcher = Callable[[SearchQuery], list[SearchHit]]


class DeepResult(Frozen):
    """The hits of a deep search, best first, and how they were found."""

    hits: list[SearchHit]
    trace: DeepTrace


@dataclass(frozen=True)
class DeepDeps:
    search: Searcher  # the fast path (MemoryCore.search)
    model: ChatModel | None
    reranker: Reranker | None
    settings: DeepSettings
    rerank: RerankSettings
    minimum: float  # the relevance cutoff of the call (threshold= or search.min_relevance)
    below_best: float | None = None  # for a conversation as the query: see read.pipeline.below_best
    zone: tzinfo = UTC  # the users' timezone (time.timezone): the days relative time names


def _expansions(settings: DeepSettings) -> list[ExpansionStep]:
    enabled: list[tuple[bool, ExpansionStep]] = [
        (settings.multi_query, "multi_query"),
        (settings.hyde, "hyde"),
        (settings.step_back, "step_back"),
    ]
    return [step for on, step in enabled if on]


@dataclass
class _Run:
    """One deep search in progress: what was searched, what was found."""

    query: SearchQuery
    deps: DeepDeps
    ledger: Ledger
    pool: Pool
    best_by_query: dict[str, float]
    message_weight: float = 1.0

    def search_all(self, planned: list[tuple[str, Origin]]) -> list[QueryRun]:
        runs = []
        for text, origin in planned:
            text = text.strip()
            if not text or text in self.pool.searched:
                continue
            self.pool.searched.add(text)
            limit = max(self.deps.settings.candidates, self.query.limit)
            hits = self.deps.search(self.query.model_copy(update={"text": text, "limit": limit}))
            weight = self.message_weight if origin == "original" else WEIGHTS[origin]
            self.pool.add(hits, weight, anchor=origin in ("question", "original"))
            best = max((hit.breakdown.relevance for hit in hits), default=0.0)
            self.best_by_query[text] = best
            runs.append(QueryRun(text=text, origin=origin, weight=weight, hits=len(hits), best=round(best, 4)))
        return runs

    def top(self) -> list[SearchHit]:
        return self.pool.ranked(self.deps.minimum, self.deps.below_best)[: self.query.limit]


def deep_search(query: SearchQuery, deps: DeepDeps, *, max_rounds: int) -> DeepResult:
    settings = deps.settings
    ledger = Ledger()
    understanding, step = understand(query.text, local(query.now, deps.zone), deps.model, use_model=settings.understand,
                                     max_tokens=settings.max_tokens)  # fmt: skip
    ledger.add(step)
    # The question first: when it is the message itself, it is searched once, as the question.
    planned: list[tuple[str, Origin]] = [(understanding.question, "question"), (query.text, "original")]
    planned += [(sub, "sub_question") for sub in understanding.sub_questions]
    for name in _expansions(settings):
        expansion = expand(name, understanding, deps.model, paraphrases=settings.paraphrases,
                           max_tokens=settings.max_tokens)  # fmt: skip
        ledger.add(expansion.step)
        planned += [(text, expansion.origin) for text in expansion.queries]
    run = _Run(query, deps, ledger, Pool(), {}, message_weight(query.text, understanding.question))
    before: set[str] = set()
    stopped: StopReason = "round_limit"
    for round_number in range(1, max_rounds + 1):
        started = time.perf_counter()
        runs = run.search_all(planned)
        top = run.top()
        ids = [hit.id for hit in top]
        new = len(set(ids) - before)
        verdict: Verdict | None = None
        if round_number > 1 and new == 0:
            stopped = "no_new_evidence"
        elif round_number == max_rounds:
            stopped = "round_limit"
        elif not settings.evaluate:
            stopped = "no_evaluator"
        else:
            verdict, step = evaluate(understanding, top[: settings.evaluator_hits], deps.model,
                                     round_number=round_number, max_tokens=settings.max_tokens,
                                     best_by_query=run.best_by_query, searched=run.pool.searched)  # fmt: skip
            ledger.add(step)
        ledger.rounds.append(RoundTrace(round=round_number, queries=tuple(runs), new_memories=new, top=tuple(ids),
                                        verdict=verdict, seconds=round(time.perf_counter() - started, 3)))  # fmt: skip
        if verdict is None:
            break
        if verdict.sufficient:
            stopped = "sufficient"
            break
        if not verdict.next_query or verdict.next_query.strip() in run.pool.searched:
            stopped = "no_new_evidence"
            break
        probe: Origin = "evaluator" if verdict.source == "model" else "keywords"
        planned, before = [(verdict.next_query, probe)], set(ids)
    hits = run.pool.ranked(deps.minimum, deps.below_best)
    if deps.reranker is not None:
        hits, step = rerank_hits(hits, understanding.question, deps.reranker, top_n=deps.rerank.top_n,
                                 weight=deps.rerank.weight, round_number=len(ledger.rounds))  # fmt: skip
        ledger.add(step)
    model_id = deps.model.model_id if deps.model is not None else None
    trace = ledger.finish(understanding, stopped, max_rounds, model_id)
    log.info("deep search %s", trace.log_line())
    return DeepResult(hits=hits[: query.limit], trace=trace)
