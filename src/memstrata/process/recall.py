"""Recall for a new task: similar past tasks and the paths that worked in them.

1. Hybrid search (the facade's one read path: keyword + dense, fused) over the units of goals, steps and
   summaries, so a task matches by what it was for, by what was tried in it, or by its summary.
2. Hits are grouped by task. A task's relevance is the cosine similarity of its best-matching unit (a step
   counts at ``STEP_WEIGHT``: a goal says more about the task than one of its steps); a unit matched by
   keywords alone counts at half its fused score. Tasks below ``min_relevance`` are dropped.
3. The tree walk runs in SQL: per task, the steps that succeeded and were not dead ends, under ancestors
   that did too (``store.process.useful_paths``), and the recorded dead ends beside them.
4. Ranking mixes relevance, confidence, cost and recency with the weights of the task type
   (``[process.weights]``); tasks that did not succeed are scaled by ``unsuccessful``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstrata.config import RecallWeights
from memstrata.process.deps import ProcessDeps
from memstrata.process.indexing import index_pending
from memstrata.query import Filters, SearchQuery
from memstrata.records.process import STEP_KIND, SUMMARY_KIND, TASK_KIND, Step, Task, TaskQuery, TaskStatus
from memstrata.types import Frozen, Scope, SearchHit

STEP_WEIGHT = 0.9
UNKNOWN_CONFIDENCE = 0.5


class RecallBreakdown(Frozen):
    """Why a past task ranked where it did; every signal is in [0, 1]."""

    relevance: float
    matched: str  # the kind of unit that matched best: goal, step or summary
    confidence: float
    cost: float
    recency: float
    outcome: float  # 1 for a task that succeeded, ``unsuccessful`` otherwise
    final: float


class RecalledTask(Frozen):
    task: Task
    score: float
    breakdown: RecallBreakdown
    path: tuple[Step, ...]  # what worked, in recording order
    dead_ends: tuple[Step, ...]  # what was tried and should not be tried again
    matched_step_ids: tuple[str, ...] = ()  # steps whose units matched the new goal


@dataclass
class _Match:
    relevance: float = 0.0
    matched: str = "goal"
    step_ids: list[str] = field(default_factory=list)


_UNIT_NAMES = {TASK_KIND: "goal", STEP_KIND: "step", SUMMARY_KIND: "summary"}


def unit_relevance(hit: SearchHit) -> float:
    """Cosine similarity where the dense list found the unit; half the fused rank score otherwise."""
    similarity = hit.breakdown.vector_similarity
    keyword_only = 0.5 * hit.breakdown.fused
    return max(similarity if similarity is not None else 0.0, keyword_only)


def _matches(hits: Sequence[SearchHit], exclude: set[str], floor: float) -> dict[str, _Match]:
    matches: dict[str, _Match] = {}
    for hit in hits:
        task_id = hit.memory.metadata.get("task_id")
        if not isinstance(task_id, str) or task_id in exclude:
            continue
        kind = _UNIT_NAMES.get(hit.memory.kind, "goal")
        relevance = unit_relevance(hit) * (STEP_WEIGHT if kind == "step" else 1.0)
        match = matches.setdefault(task_id, _Match())
        step_id = hit.memory.metadata.get("step_id")
        if kind == "step" and isinstance(step_id, str):
            match.step_ids.append(step_id)
        if relevance > match.relevance:
            match.relevance, match.matched = relevance, kind
    return {task_id: match for task_id, match in matches.items() if match.relevance >= floor}


def _confidence(task: Task, path: Sequence[Step]) -> float:
    known = [step.confidence for step in path if step.confidence is not None]
    if known:
        return sum(known) / len(known)
    return task.confidence if task.confidence is not None else UNKNOWN_CONFIDENCE


def _cost(steps: Sequence[Step], weights: RecallWeights) -> float:
    seconds = sum(step.cost_seconds or 0.0 for step in steps)
    tokens = sum(step.cost_tokens or 0 for step in steps)
    return 1.0 / (1.0 + seconds / weights.cost_scale_seconds + tokens / weights.cost_scale_tokens)


def _recency(task: Task, now: datetime, weights: RecallWeights) -> float:
    age_days = max(0.0, (now - (task.ended_at or task.started_at)).total_seconds() / 86_400)
    return float(0.5 ** (age_days / weights.recency_half_life_days))


def score(task: Task, match: _Match, path: Sequence[Step], steps: Sequence[Step], weights: RecallWeights,
          now: datetime) -> RecallBreakdown:  # fmt: skip
    signals = {
        "relevance": match.relevance,
        "confidence": _confidence(task, path),
        "cost": _cost(path or steps, weights),
        "recency": _recency(task, now, weights),
    }
    total = sum(getattr(weights, name) for name in signals) or 1.0
    mixed = sum(getattr(weights, name) * value for name, value in signals.items()) / total
    outcome = 1.0 if task.status == TaskStatus.SUCCEEDED else weights.unsuccessful
    return RecallBreakdown(matched=match.matched, outcome=outcome, final=mixed * outcome, **signals)


def recall_tasks(
    deps: ProcessDeps,
    scope: Scope,
    goal: str,
    *,
    task_type: str | None = None,
    limit: int = 5,
    exclude: Sequence[str] = (),
) -> list[RecalledTask]:
    """Past tasks like ``goal``, best first. ``task_type`` (the new task's) picks the weights; without it each
    past task is ranked with the weights of its own type."""
    index_pending(deps, scope)
    settings = deps.settings
    now = deps.clock()
    query = SearchQuery(
        scope=scope, text=goal, limit=settings.candidates, filters=Filters(kind=(TASK_KIND, STEP_KIND, SUMMARY_KIND)),
        now=now, lifecycle=False, understand_time=False, graph=False, record_access=False,
    )  # fmt: skip
    matches = _matches(deps.search(query), set(exclude), settings.min_relevance)
    if not matches:
        return []
    store = deps.store.process
    tasks = store.tasks(TaskQuery(scope=scope, ids=tuple(matches), limit=len(matches)))
    ids = [task.id for task in tasks]
    paths = store.useful_paths(scope, ids)
    steps_of: dict[str, list[Step]] = {}
    for step in store.steps(scope, task_ids=ids):
        steps_of.setdefault(step.task_id, []).append(step)
    recalled = []
    for task in tasks:
        path, steps = paths.get(task.id, []), steps_of.get(task.id, [])
        weights = settings.weights_for(task_type or task.task_type)
        breakdown = score(task, matches[task.id], path, steps, weights, now)
        recalled.append(
            RecalledTask(
                task=task, score=breakdown.final, breakdown=breakdown, path=tuple(path),
                dead_ends=tuple(step for step in steps if step.dead_end),
                matched_step_ids=tuple(dict.fromkeys(matches[task.id].step_ids)),
            )
        )  # fmt: skip
    recalled.sort(key=lambda item: item.score, reverse=True)
    return recalled[:limit]
