"""Recording, planned as writes: each function returns the records and the one WriteBatch that stores them
with their index units and history, so a step and its searchable unit are committed together or not at all.
No model and no embedder runs here: recording a step is one cheap transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import Field, model_validator

from memstrata.errors import InvalidInputError
from memstrata.process.units import added, step_text, step_unit, task_text, task_unit, unit
from memstrata.records.process import (
    ARTIFACT_KIND,
    FINISHED,
    Action,
    ActionType,
    Artifact,
    Hypothesis,
    HypothesisStatus,
    Step,
    StepStatus,
    Task,
    TaskStatus,
    TaskType,
)
from memstrata.storage.protocol import WriteBatch
from memstrata.types import Frozen, JsonDict, Scope, StorableText, new_id


class TaskInput(Frozen):
    goal: StorableText = Field(min_length=1)
    context: StorableText | None = None
    constraints: tuple[StorableText, ...] = ()
    task_type: TaskType = "general"
    metadata: JsonDict = Field(default_factory=dict)


class StepInput(Frozen):
    """One step as an agent reports it. ``hypothesis`` proposes a new hypothesis (a ``hypothesize`` step's
    input is one by itself); ``hypothesis_id`` names an existing one the step tests."""

    action: Action
    input: StorableText = Field(min_length=1)
    output: StorableText | None = None
    reasoning: StorableText | None = None
    parent_id: str | None = Field(default=None, min_length=1, max_length=256)
    hypothesis: StorableText | None = None
    hypothesis_id: str | None = Field(default=None, min_length=1, max_length=256)
    status: StepStatus = StepStatus.SUCCEEDED
    dead_end: bool = False
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    generalisable: bool | None = None
    tags: JsonDict = Field(default_factory=dict)
    cost_seconds: float | None = Field(default=None, ge=0.0, le=1e9)
    cost_tokens: int | None = Field(default=None, ge=0, le=2**62)

    @model_validator(mode="before")
    @classmethod
    def _dead_ends_failed(cls, data: Any) -> Any:
        """A dead end that names no status failed, as ``step.dead_end()`` records it (a REST or MCP step sent with
        dead_end=true was kept as succeeded)."""
        if isinstance(data, dict) and data.get("dead_end") is True and data.get("status") is None:
            return {**data, "status": StepStatus.FAILED}
        return data


class StepChange(Frozen):
    """What may change on a recorded step: how it ended and its utility tags (tags are merged)."""

    output: StorableText | None = None
    status: StepStatus | None = None
    dead_end: bool | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    generalisable: bool | None = None
    tags: JsonDict = Field(default_factory=dict)
    cost_seconds: float | None = Field(default=None, ge=0.0, le=1e9)
    cost_tokens: int | None = Field(default=None, ge=0, le=2**62)


def plan_task(scope: Scope, given: TaskInput, now: datetime, *, max_chars: int) -> tuple[Task, WriteBatch]:
    task_id = new_id()
    goal_unit = task_unit(scope, task_id, given.task_type, task_text(given.goal, given.context), now,
                          max_chars=max_chars)  # fmt: skip
    task = Task(
        id=task_id, scope=scope, goal=given.goal, context=given.context, constraints=given.constraints,
        task_type=given.task_type, memory_id=goal_unit.id, metadata=given.metadata, started_at=now, updated_at=now,
    )  # fmt: skip
    return task, WriteBatch(inserts=[goal_unit], history=[added(goal_unit, now)], tasks=[task])


def plan_step(
    task: Task, given: StepInput, now: datetime, *, max_chars: int
) -> tuple[Step, Hypothesis | None, WriteBatch]:
    """The step (ended now unless it is still running) and, if it proposes one, its hypothesis."""
    step_id = new_id()
    proposed = given.hypothesis or (given.input if given.action == ActionType.HYPOTHESIZE else None)
    hypothesis = None
    if proposed is not None and given.hypothesis_id is None:
        hypothesis = Hypothesis(id=new_id(), task_id=task.id, scope=task.scope, text=proposed, step_id=step_id,
                                created_at=now, updated_at=now)  # fmt: skip
    intent = given.reasoning if given.hypothesis is None else f"{given.reasoning or ''}\n{given.hypothesis}".strip()
    step_index = step_unit(task.scope, task.id, step_id, given.action, step_text(given.input, intent), now,
                           max_chars=max_chars)  # fmt: skip
    fields = given.model_dump(exclude={"hypothesis"})
    fields["hypothesis_id"] = given.hypothesis_id or (hypothesis.id if hypothesis else None)
    ended = None if given.status == StepStatus.RUNNING else now
    step = Step(id=step_id, task_id=task.id, scope=task.scope, memory_id=step_index.id,
                started_at=now, ended_at=ended, **fields)  # fmt: skip
    batch = WriteBatch(inserts=[step_index], history=[added(step_index, now)], steps=[step],
                       hypotheses=[hypothesis] if hypothesis else [])  # fmt: skip
    return step, hypothesis, batch


def changed_step(step: Step, change: StepChange, now: datetime) -> Step:
    updates: dict[str, Any] = {
        name: value
        for name, value in change.model_dump(exclude={"tags"}).items()
        if value is not None and name in change.model_fields_set
    }
    if change.tags:
        updates["tags"] = {**step.tags, **change.tags}
    if updates.get("dead_end") and "status" not in updates and step.status == StepStatus.RUNNING:
        updates["status"] = StepStatus.FAILED  # a finished step keeps its status: it may have run fine, to no end
    if updates.get("status", step.status) != StepStatus.RUNNING and step.ended_at is None:
        updates["ended_at"] = now
    return step.model_copy(update=updates)


def resolved_hypothesis(
    hypothesis: Hypothesis, status: HypothesisStatus, evidence: Sequence[str], now: datetime
) -> Hypothesis:
    merged = tuple(dict.fromkeys([*hypothesis.evidence, *evidence]))
    return hypothesis.model_copy(update={"status": status, "evidence": merged, "updated_at": now})


def plan_artifact(
    task: Task,
    name: str,
    text: str | None,
    uri: str | None,
    step_id: str | None,
    metadata: Mapping[str, Any],
    now: datetime,
    *,
    max_chars: int,
) -> tuple[Artifact, WriteBatch]:
    """A text artifact is indexed by its text; a file reference by its name, description and path."""
    artifact_id = new_id()
    indexed = "\n".join(part for part in (name, text, uri) if part)
    artifact_unit = unit(ARTIFACT_KIND, task.scope, indexed, {"task_id": task.id, "artifact_id": artifact_id}, now,
                         max_chars=max_chars)  # fmt: skip
    artifact = Artifact(id=artifact_id, task_id=task.id, scope=task.scope, step_id=step_id, name=name, text=text,
                        uri=uri, memory_id=artifact_unit.id, metadata=dict(metadata), created_at=now)  # fmt: skip
    return artifact, WriteBatch(inserts=[artifact_unit], history=[added(artifact_unit, now)], artifacts=[artifact])


def task_status(value: str, *, allow_running: bool = False) -> TaskStatus:
    allowed = [TaskStatus.RUNNING, *FINISHED] if allow_running else list(FINISHED)
    try:
        status = TaskStatus(value)
    except ValueError:
        status = None
    if status not in allowed:
        raise InvalidInputError(f"task status must be one of {', '.join(s.value for s in allowed)}, not {value!r}")
    return status


def hypothesis_status(value: str) -> HypothesisStatus:
    try:
        return HypothesisStatus(value)
    except ValueError:
        raise InvalidInputError(f"hypothesis status must be open, supported or refuted, not {value!r}") from None
