"""What deep search did, step by step: returned with every deep result and logged as one JSON line.

A step is one piece of query work (understand, an expansion, the evaluator, the reranker) and says
whether the model or the offline heuristic produced it, why a heuristic stood in (``fallback``),
and what it cost (model tokens and seconds). A round is one pass of retrieval: the queries searched,
how many hits each found, how many memories were new, and the evaluator's verdict.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import Field

from memstrata.types import Frozen

ExpansionStep = Literal["multi_query", "hyde", "step_back"]
StepName = Literal["understand", "multi_query", "hyde", "step_back", "evaluate", "rerank"]
Source = Literal["model", "heuristic"]
StopReason = Literal["sufficient", "no_new_evidence", "round_limit", "no_evaluator"]
Origin = Literal["original", "question", "sub_question", "keywords", "multi_query", "hyde", "step_back", "evaluator"]


class TimeRangeOut(Frozen):
    """The time range a question names, resolved against the search's clock."""

    start: datetime
    end: datetime
    expression: str


class Understanding(Frozen):
    """The query as deep search understood it, in the query's own language."""

    question: str = Field(description="the real question, small talk removed")
    language: Literal["zh", "en"]
    entities: tuple[str, ...] = ()
    sub_questions: tuple[str, ...] = Field(default=(), description="the parts of a compound question")
    time_range: TimeRangeOut | None = None
    keywords: str = Field(default="", description="the question's content words (a keyword sub-query)")
    source: Source


class StepTrace(Frozen):
    step: StepName
    round: int
    source: Source
    output: tuple[str, ...] = Field(default=(), description="the queries (or verdict / order) the step produced")
    fallback: str | None = Field(default=None, description="why the heuristic ran instead of the model")
    model_id: str | None = Field(default=None, description="the model asked, whether or not its answer was used")
    calls: int = Field(default=0, description="model (or reranker) calls this step made, failed ones included")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class QueryRun(Frozen):
    text: str
    origin: Origin
    weight: float
    hits: int
    best: float = Field(description="the best calibrated relevance this query found")


class Verdict(Frozen):
    sufficient: bool
    missing: str = ""
    next_query: str = ""
    source: Source


class RoundTrace(Frozen):
    round: int
    queries: tuple[QueryRun, ...]
    new_memories: int = Field(description="memories in the fused top hits that no earlier round had there")
    top: tuple[str, ...] = Field(description="ids of the fused top hits after this round, best first")
    verdict: Verdict | None = None
    seconds: float


class DeepTrace(Frozen):
    """The whole run: understanding, every step and round, why it stopped, and what it cost."""

    understanding: Understanding
    steps: tuple[StepTrace, ...]
    rounds: tuple[RoundTrace, ...]
    stopped: StopReason
    max_rounds: int
    model_id: str | None = None
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    seconds: float = 0.0
    fallbacks: int = Field(default=0, description="steps where the heuristic stood in for a failed model call")

    def log_line(self) -> str:
        """One JSON line for logs: every field, no private data beyond the queries themselves."""
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


@dataclass
class Ledger:
    """Collects steps while a run goes on (the trace is frozen once it ends). Thread-safe: the reranker may
    run pointwise calls in parallel in future; today everything is sequential."""

    started: float = field(default_factory=time.perf_counter)
    steps: list[StepTrace] = field(default_factory=list)
    rounds: list[RoundTrace] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, step: StepTrace) -> None:
        with self._lock:
            self.steps.append(step)

    def finish(
        self, understanding: Understanding, stopped: StopReason, max_rounds: int, model_id: str | None
    ) -> DeepTrace:
        modelled = [step for step in self.steps if step.calls]  # asked, answered or not
        return DeepTrace(
            understanding=understanding,
            steps=tuple(self.steps),
            rounds=tuple(self.rounds),
            stopped=stopped,
            max_rounds=max_rounds,
            model_id=model_id,
            model_calls=sum(step.calls for step in modelled),
            prompt_tokens=sum(step.prompt_tokens for step in self.steps),
            completion_tokens=sum(step.completion_tokens for step in self.steps),
            model_seconds=round(sum(step.seconds for step in modelled), 3),
            seconds=round(time.perf_counter() - self.started, 3),
            fallbacks=sum(1 for step in self.steps if step.fallback is not None),
        )
