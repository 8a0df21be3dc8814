"""Rows <-> process records (tasks, steps, hypotheses, artifacts, strategies), once for every backend.

Optional ids (a step's parent, a hypothesis' step) are stored as '' when absent, like scope columns, so
equality joins between siblings need no NULL handling. Each column list starts with id and the four scope
columns: the shape :func:`~memstrata.storage.sql.upsert.upsert_scoped` writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memstrata.records.process import (
    Artifact,
    CounterExample,
    Hypothesis,
    HypothesisStatus,
    Step,
    StepStatus,
    Strategy,
    StrategyStep,
    Task,
    TaskStatus,
)
from memstrata.storage.sql.dialect import Dialect
from memstrata.storage.sql.rows import scope_columns, scope_from

TASK_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, goal, context, constraints, task_type, status, outcome, "
    "confidence, summary, summary_source, compressed, memory_id, summary_memory_id, metadata, started_at, "
    "ended_at, updated_at"
)
STEP_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, task_id, parent_id, action, input, output, reasoning, "
    "hypothesis_id, status, dead_end, confidence, generalisable, tags, cost_seconds, cost_tokens, memory_id, "
    "started_at, ended_at"
)
HYPOTHESIS_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, task_id, text, status, step_id, evidence, created_at, updated_at"
)
ARTIFACT_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, task_id, step_id, name, text, uri, memory_id, metadata, created_at"
)
STRATEGY_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, task_type, trigger_condition, steps, expected_outcome, "
    "confidence, support, successes, failures, example_task_ids, counter_examples, memory_id, created_at, "
    "updated_at"
)


def _required(d: Dialect, value: Any) -> datetime:
    moment = d.time(value)
    if moment is None:
        raise ValueError("a NOT NULL timestamp column came back empty")
    return moment


def _flag(value: Any) -> bool | None:
    return None if value is None else bool(value)  # SQLite keeps 0/1, PostgreSQL booleans


def task_params(d: Dialect, task: Task) -> tuple[Any, ...]:
    return (
        task.id, *scope_columns(task.scope), task.goal, task.context, d.json(list(task.constraints)),
        task.task_type, task.status.value, d.model_text(task.outcome), task.confidence, d.model_text(task.summary),
        task.summary_source, task.compressed, task.memory_id, task.summary_memory_id, d.json(task.metadata),
        d.ts(task.started_at), d.ts(task.ended_at), d.ts(task.updated_at),
    )  # fmt: skip


def task(d: Dialect, row: Sequence[Any]) -> Task:
    (
        task_id, tenant, user, agent, session, goal, context, constraints, task_type, status, outcome, confidence,
        summary, summary_source, compressed, memory_id, summary_memory_id, metadata, started, ended, updated,
    ) = row  # fmt: skip
    return Task.model_construct(  # validated on the way in
        id=task_id, scope=scope_from(tenant, user, agent, session), goal=goal, context=context,
        constraints=tuple(d.from_json(constraints)), task_type=task_type, status=TaskStatus(status), outcome=outcome,
        confidence=confidence, summary=summary, summary_source=summary_source, compressed=bool(compressed),
        memory_id=memory_id, summary_memory_id=summary_memory_id, metadata=d.from_json(metadata),
        started_at=_required(d, started), ended_at=d.time(ended), updated_at=_required(d, updated),
    )  # fmt: skip


def step_params(d: Dialect, step: Step) -> tuple[Any, ...]:
    return (
        step.id, *scope_columns(step.scope), step.task_id, step.parent_id or "", step.action, step.input,
        d.model_text(step.output), step.reasoning, step.hypothesis_id or "", step.status.value, step.dead_end,
        step.confidence, step.generalisable, d.model_json(step.tags), step.cost_seconds, step.cost_tokens,
        step.memory_id, d.ts(step.started_at), d.ts(step.ended_at),
    )  # fmt: skip


def step(d: Dialect, row: Sequence[Any]) -> Step:
    (
        step_id, tenant, user, agent, session, task_id, parent_id, action, text, output, reasoning, hypothesis_id,
        status, dead_end, confidence, generalisable, tags, cost_seconds, cost_tokens, memory_id, started, ended,
    ) = row  # fmt: skip
    return Step.model_construct(
        id=step_id, task_id=task_id, scope=scope_from(tenant, user, agent, session), parent_id=parent_id or None,
        action=action, input=text, output=output, reasoning=reasoning, hypothesis_id=hypothesis_id or None,
        status=StepStatus(status), dead_end=bool(dead_end), confidence=confidence, generalisable=_flag(generalisable),
        tags=d.from_json(tags), cost_seconds=cost_seconds, cost_tokens=cost_tokens, memory_id=memory_id,
        started_at=_required(d, started), ended_at=d.time(ended),
    )  # fmt: skip


def hypothesis_params(d: Dialect, hypothesis: Hypothesis) -> tuple[Any, ...]:
    return (
        hypothesis.id, *scope_columns(hypothesis.scope), hypothesis.task_id, hypothesis.text, hypothesis.status.value,
        hypothesis.step_id or "", d.json(list(hypothesis.evidence)), d.ts(hypothesis.created_at),
        d.ts(hypothesis.updated_at),
    )  # fmt: skip


def hypothesis(d: Dialect, row: Sequence[Any]) -> Hypothesis:
    hypothesis_id, tenant, user, agent, session, task_id, text, status, step_id, evidence, created, updated = row
    return Hypothesis.model_construct(
        id=hypothesis_id, task_id=task_id, scope=scope_from(tenant, user, agent, session), text=text,
        status=HypothesisStatus(status), step_id=step_id or None, evidence=tuple(d.from_json(evidence)),
        created_at=_required(d, created), updated_at=_required(d, updated),
    )  # fmt: skip


def artifact_params(d: Dialect, artifact: Artifact) -> tuple[Any, ...]:
    return (
        artifact.id, *scope_columns(artifact.scope), artifact.task_id, artifact.step_id or "", artifact.name,
        artifact.text, artifact.uri, artifact.memory_id, d.json(artifact.metadata), d.ts(artifact.created_at),
    )  # fmt: skip


def artifact(d: Dialect, row: Sequence[Any]) -> Artifact:
    artifact_id, tenant, user, agent, session, task_id, step_id, name, text, uri, memory_id, metadata, created = row
    return Artifact.model_construct(
        id=artifact_id, task_id=task_id, scope=scope_from(tenant, user, agent, session), step_id=step_id or None,
        name=name, text=text, uri=uri, memory_id=memory_id, metadata=d.from_json(metadata),
        created_at=_required(d, created),
    )  # fmt: skip


def strategy_params(d: Dialect, strategy: Strategy) -> tuple[Any, ...]:
    return (
        strategy.id, *scope_columns(strategy.scope), strategy.task_type, d.json(strategy.trigger),
        d.json([part.model_dump(mode="json") for part in strategy.steps]), strategy.expected_outcome,
        strategy.confidence, strategy.support, strategy.successes, strategy.failures,
        d.json(list(strategy.example_task_ids)),
        d.json([part.model_dump(mode="json") for part in strategy.counter_examples]), strategy.memory_id,
        d.ts(strategy.created_at), d.ts(strategy.updated_at),
    )  # fmt: skip


def strategy(d: Dialect, row: Sequence[Any]) -> Strategy:
    (
        strategy_id, tenant, user, agent, session, task_type, trigger, steps, expected_outcome, confidence, support,
        successes, failures, example_task_ids, counter_examples, memory_id, created, updated,
    ) = row  # fmt: skip
    return Strategy.model_construct(
        id=strategy_id, scope=scope_from(tenant, user, agent, session), task_type=task_type,
        trigger=d.from_json(trigger), steps=tuple(StrategyStep.model_validate(part) for part in d.from_json(steps)),
        expected_outcome=expected_outcome, confidence=confidence, support=support, successes=successes,
        failures=failures, example_task_ids=tuple(d.from_json(example_task_ids)),
        counter_examples=tuple(CounterExample.model_validate(part) for part in d.from_json(counter_examples)),
        memory_id=memory_id, created_at=_required(d, created), updated_at=_required(d, updated),
    )  # fmt: skip


# (export record type, table, columns, decoder), in the order export and copy replay them: tasks first.
PROCESS_TABLES = (
    ("task", "process_tasks", TASK_COLUMNS, task),
    ("task_step", "process_steps", STEP_COLUMNS, step),
    ("task_hypothesis", "process_hypotheses", HYPOTHESIS_COLUMNS, hypothesis),
    ("task_artifact", "process_artifacts", ARTIFACT_COLUMNS, artifact),
    ("task_strategy", "process_strategies", STRATEGY_COLUMNS, strategy),
)
