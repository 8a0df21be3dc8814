"""``memory.tasks``: process memory. Record how a task was worked through (steps in a tree, hypotheses,
artifacts, utility tags), then recall similar past tasks with the paths that worked, check a plan against
recorded dead ends, and query the strategies mined from finished tasks.

Recording is cheap and durable: each call is one transaction holding the record and its index unit; the
unit is embedded later (when the task finishes, or before the next read that compares vectors). Tasks are
scoped like memories; a task handle's reads use its long-term scope (without the session), so a new
session recalls what earlier sessions tried.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Unpack

from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.facade.core import MemoryCore
from memstrata.facade.ids import is_shortened
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.process.deps import ProcessDeps
from memstrata.process.indexing import index_pending
from memstrata.process.lifecycle import compress_task, finish_task, restore_task
from memstrata.process.mining import find_strategies, mine_strategies
from memstrata.process.plan_check import Alternative, PlannedStep, PlanWarning, alternatives, check_plan
from memstrata.process.recall import RecalledTask, recall_tasks
from memstrata.process.recording import TaskRecorder
from memstrata.process.trees import TaskTree, render_mermaid, render_text
from memstrata.process.writes import (
    StepChange,
    StepInput,
    TaskInput,
    changed_step,
    hypothesis_status,
    plan_artifact,
    plan_step,
    plan_task,
    resolved_hypothesis,
    task_status,
)
from memstrata.records.process import (
    Artifact,
    Hypothesis,
    HypothesisStatus,
    Step,
    StepStatus,
    Strategy,
    Task,
    TaskQuery,
)
from memstrata.storage.protocol import WriteBatch
from memstrata.types import new_id
from memstrata.validation import check_count, check_strings, clean_id, clean_text, parse_model
from memstrata.write.extract import LLMExtractor
from memstrata.write.pipeline import long_term_scope

TreeFormat = Literal["text", "mermaid"]


class TasksAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def _deps(self) -> ProcessDeps:
        core = self._core
        model = core.extractor.model if isinstance(core.extractor, LLMExtractor) else None
        return ProcessDeps(store=core.store, search=core.search, vector_batch=core.vector_batch,
                           embed=core.embedder.embed_batch,
                           identity=core.identity, clock=core.clock, settings=core.settings.process,
                           max_text_chars=core.settings.limits.max_text_chars, model=model)  # fmt: skip

    def _text(self, value: object, field: str) -> str:
        return clean_text(
            value, field=field, max_chars=self._core.settings.limits.max_whole_chars, setting="limits.max_whole_chars"
        )

    def _optional(self, value: object, field: str) -> str | None:
        return None if value is None else self._text(value, field)

    # --- recording ------------------------------------------------------------------------------
    def start(
        self,
        goal: str,
        *,
        context: str | None = None,
        constraints: Sequence[str] = (),
        task_type: str = "general",
        metadata: Mapping[str, Any] | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> TaskRecorder:
        """Start a task (committed at once) and return its handle: a context manager that records steps."""
        return TaskRecorder(self, self.begin(goal, context=context, constraints=constraints, task_type=task_type,
                                             metadata=metadata, **scope))  # fmt: skip

    def begin(
        self,
        goal: str,
        *,
        context: str | None = None,
        constraints: Sequence[str] = (),
        task_type: str = "general",
        metadata: Mapping[str, Any] | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> Task:
        """Start a task and return the record (for callers that record step by step, as REST and MCP do)."""
        resolved = self._binding.scope(scope)
        if isinstance(constraints, str):
            raise InvalidInputError("constraints must be a list of strings, not one string")
        check_strings(dict(metadata or {}), "metadata")
        given = parse_model(TaskInput, {
            "goal": self._text(goal, "goal"), "context": self._optional(context, "context"),
            "constraints": [self._text(c, f"constraints[{n}]") for n, c in enumerate(constraints)],
            "task_type": task_type, "metadata": dict(metadata or {}),
        }, what="task")  # fmt: skip
        task, batch = plan_task(
            resolved, given, self._core.clock(), max_chars=self._core.settings.limits.max_text_chars
        )
        self._core.store.write(batch)
        return task

    def record_step(self, task_id: str, action: str, input: str, **fields: Any) -> Step:
        """Record one step in one call: ``output``, ``reasoning``, ``parent_id``, ``hypothesis`` (proposes one),
        ``hypothesis_id`` (tests one), ``status`` (default succeeded; "running" for a step still going),
        ``dead_end``, ``confidence``, ``generalisable``, ``tags``, ``cost_seconds``, ``cost_tokens``, and the
        scope ids. Committed at once; its embedding waits for the task's end or the next recall."""
        scope = {name: fields.pop(name) for name in ("user_id", "agent_id", "session_id") if name in fields}
        task = self.get(task_id, **scope)
        for name in ("output", "reasoning", "hypothesis"):
            if fields.get(name) is not None:
                fields[name] = self._text(fields[name], name)
        check_strings(fields.get("tags") or {}, "tags")
        given = parse_model(StepInput, {"action": action, "input": self._text(input, "input"), **fields}, what="step")
        return self._record(task, given)

    def _record(self, task: Task, given: StepInput) -> Step:
        for name in ("input", "output", "reasoning", "hypothesis"):  # the limit applies on every way in
            value = getattr(given, name)
            if value is not None:
                self._text(value, name)
        if task.finished:
            raise ConflictError(f"task {task.id} is {task.status.value}; start a new task to record more steps")
        self._check_links(task, given.parent_id, given.hypothesis_id)
        step, _, batch = plan_step(task, given, self._core.clock(), max_chars=self._core.settings.limits.max_text_chars)
        self._core.store.write(batch)
        return step

    def _check_links(self, task: Task, parent_id: str | None, hypothesis_id: str | None) -> None:
        store = self._core.store.process
        if parent_id is not None and not [s for s in store.steps(task.scope, step_ids=[parent_id])
                                          if s.task_id == task.id]:  # fmt: skip
            raise NotFoundError(f"no step {parent_id} in task {task.id}; a parent must be a step of the same task")
        if hypothesis_id is not None and not [h for h in store.hypotheses(task.scope, ids=[hypothesis_id])
                                              if h.task_id == task.id]:  # fmt: skip
            raise NotFoundError(f"no hypothesis {hypothesis_id} in task {task.id}")

    def update_step(self, step_id: str, **fields: Any) -> Step:
        """End or re-tag a recorded step: ``output``, ``status``, ``dead_end``, ``confidence``, ``generalisable``,
        ``tags`` (merged), ``cost_seconds``, ``cost_tokens``, and the scope ids."""
        scope = {name: fields.pop(name) for name in ("user_id", "agent_id", "session_id") if name in fields}
        step = self.step(step_id, **scope)
        task = self.get(step.task_id, **scope)
        if task.finished and step.status != StepStatus.RUNNING:
            # a finished task's record is closed, as for new steps: a step rewritten after it (succeeded -> failed,
            # a dead end) left the stored summary saying otherwise (a user trial). A step still running may end.
            raise ConflictError(
                f"task {task.id} is {task.status.value}; its recorded steps can no longer change; "
                "start a new task to record what changed"
            )
        if fields.get("output") is not None:
            fields["output"] = self._text(fields["output"], "output")
        check_strings(fields.get("tags") or {}, "tags")
        return self._update(step, parse_model(StepChange, fields, what="step change"))

    def _update(self, step: Step, change: StepChange) -> Step:
        updated = changed_step(step, change, self._core.clock())
        self._core.store.write(WriteBatch(steps=[updated]))
        return updated

    def hypothesize(
        self, task_id: str, text: str, *, step_id: str | None = None, **scope: Unpack[ScopeArgs]
    ) -> Hypothesis:
        return self._hypothesize(self.get(task_id, **scope), self._text(text, "text"), step_id)

    def _hypothesize(self, task: Task, text: str, step_id: str | None) -> Hypothesis:
        if task.finished:  # as for steps: a finished task's record is closed (its hypotheses can still be resolved)
            raise ConflictError(f"task {task.id} is {task.status.value}; start a new task to propose more")
        self._check_links(task, step_id, None)
        now = self._core.clock()
        hypothesis = parse_model(Hypothesis, {"id": new_id(), "task_id": task.id, "scope": task.scope,
                                              "text": self._text(text, "text"), "step_id": step_id,
                                              "created_at": now, "updated_at": now}, what="hypothesis")  # fmt: skip
        self._core.store.write(WriteBatch(hypotheses=[hypothesis]))
        return hypothesis

    def resolve_hypothesis(
        self, hypothesis_id: str, status: str, *, evidence: Sequence[str] = (), **scope: Unpack[ScopeArgs]
    ) -> Hypothesis:
        """Mark a hypothesis supported or refuted, naming the steps that are its evidence. Refuting one makes the
        step that proposed it a dead end (so ``check_plan`` flags the idea next time)."""
        resolved = self._binding.scope(scope)
        found = self._core.store.process.hypotheses(resolved, ids=[clean_id(hypothesis_id, field="hypothesis_id")])
        if not found:
            raise NotFoundError(f"no hypothesis {hypothesis_id} in scope {resolved.label()}")
        task = self.get(found[0].task_id, **scope)
        return self._resolve(task, found[0].id, hypothesis_status(status), evidence)

    def _resolve(self, task: Task, hypothesis_id: str, status: HypothesisStatus, evidence: Sequence[str]) -> Hypothesis:
        store = self._core.store.process
        if isinstance(evidence, str):
            raise InvalidInputError("evidence must be a list of step ids, not one string")
        found = [h for h in store.hypotheses(task.scope, ids=[hypothesis_id]) if h.task_id == task.id]
        if not found:
            raise NotFoundError(f"no hypothesis {hypothesis_id} in task {task.id}")
        steps = {s.id: s for s in store.steps(task.scope, task_ids=[task.id])}
        unknown = [step_id for step_id in evidence if step_id not in steps]
        if unknown:
            raise NotFoundError(f"evidence step {unknown[0]} is not a step of task {task.id}")
        now = self._core.clock()
        hypothesis = resolved_hypothesis(found[0], status, evidence, now)
        proposer = steps.get(hypothesis.step_id or "")
        dead = (
            [proposer.model_copy(update={"dead_end": True})] if status == HypothesisStatus.REFUTED and proposer else []
        )
        self._core.store.write(WriteBatch(hypotheses=[hypothesis], steps=dead))
        return hypothesis

    def add_artifact(
        self,
        task_id: str,
        name: str,
        *,
        text: str | None = None,
        uri: str | None = None,
        step_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> Artifact:
        """Keep a by-product: text, or a file reference (``uri``) with a description in ``text``. Indexed."""
        return self._artifact(self.get(task_id, **scope), name, text, uri, step_id, metadata or {})

    def _artifact(self, task: Task, name: str, text: str | None, uri: str | None, step_id: str | None,
                  metadata: Mapping[str, Any]) -> Artifact:  # fmt: skip
        if text is None and uri is None:
            raise InvalidInputError("an artifact needs text, a file reference (uri), or both")
        self._check_links(task, step_id, None)
        check_strings(dict(metadata), "metadata")
        artifact, batch = plan_artifact(task, self._text(name, "name"), self._optional(text, "text"),
                                        self._optional(uri, "uri"), step_id, metadata, self._core.clock(),
                                        max_chars=self._core.settings.limits.max_text_chars)  # fmt: skip
        self._core.store.write(batch)
        return artifact

    def finish(
        self,
        task_id: str,
        outcome: str | None = None,
        *,
        status: str = "succeeded",
        confidence: float | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> Task:
        """Close a task with its outcome; then (``[process]`` settings) summarise and compress it, embed its
        units, and re-mine the strategies of its type."""
        return self._finish(self.get(task_id, **scope), status, outcome, confidence)

    def _finish(self, task: Task, status: str, outcome: str | None, confidence: float | None) -> Task:
        now = self._core.clock()
        closed = parse_model(Task, {**task.model_dump(), "status": task_status(status), "confidence": confidence,
                                    "outcome": self._optional(outcome, "outcome"), "ended_at": now,
                                    "updated_at": now}, what="task")  # fmt: skip
        return finish_task(self._deps(), task, closed)

    def compress(self, task_id: str, **scope: Unpack[ScopeArgs]) -> Task:
        """Summarise a finished task and let the summary stand in for its chain in recall (archived, restorable)."""
        return compress_task(self._deps(), self.get(task_id, **scope))

    def restore(self, task_id: str, **scope: Unpack[ScopeArgs]) -> Task:
        """Bring a compressed task's chain back into recall (its summary is archived)."""
        return restore_task(self._deps(), self.get(task_id, **scope))

    # --- reading ---------------------------------------------------------------------------------
    def get(self, task_id: str, **scope: Unpack[ScopeArgs]) -> Task:
        resolved = self._binding.scope(scope)
        task_id = clean_id(task_id, field="task_id")
        found = self._core.store.process.tasks(TaskQuery(scope=resolved, ids=(task_id,), limit=1))
        if not found and is_shortened(task_id):  # the 8 or 12 characters listings and context() show
            return self.get(self.resolve_id(task_id, **scope), **scope)
        if not found:
            raise NotFoundError(f"no task {task_id} in scope {resolved.label()}; check the id and the scope")
        return found[0]

    def step(self, step_id: str, **scope: Unpack[ScopeArgs]) -> Step:
        resolved = self._binding.scope(scope)
        found = self._core.store.process.steps(resolved, step_ids=[clean_id(step_id, field="step_id")])
        if not found:
            raise NotFoundError(f"no step {step_id} in scope {resolved.label()}")
        return found[0]

    def resolve_id(self, prefix: str, **scope: Unpack[ScopeArgs]) -> str:
        """The full id of the task a unique prefix (at least 4 characters) names in the scope."""
        prefix = clean_id(prefix, field="task id")
        resolved = self._binding.scope(scope)
        if len(prefix) < 4:
            raise InvalidInputError("give at least 4 characters of a task id")
        found = self._core.store.process.tasks(TaskQuery(scope=resolved, id_prefix=prefix, limit=6))
        if len(found) == 1:
            return found[0].id
        if not found:
            raise NotFoundError(f"no task id starts with {prefix!r} in scope {resolved.label()}")
        raise InvalidInputError(f"{prefix!r} names several tasks ({', '.join(t.id[:12] for t in found)}); give more")

    def tree(self, task_id: str, **scope: Unpack[ScopeArgs]) -> TaskTree:
        """The task with every step (in recording order), hypothesis and artifact."""
        task = self.get(task_id, **scope)
        store = self._core.store.process
        return TaskTree(task=task, steps=tuple(store.steps(task.scope, task_ids=[task.id])),
                        hypotheses=tuple(store.hypotheses(task.scope, task_ids=[task.id])),
                        artifacts=tuple(store.artifacts(task.scope, task_ids=[task.id])))  # fmt: skip

    def render(self, task_id: str, format: TreeFormat = "text", **scope: Unpack[ScopeArgs]) -> str:
        """The step tree as indented text or as a Mermaid flowchart."""
        if format not in ("text", "mermaid"):
            raise InvalidInputError(f"format must be text or mermaid, not {format!r}")
        tree = self.tree(task_id, **scope)
        return render_mermaid(tree) if format == "mermaid" else render_text(tree)

    def recall(
        self, goal: str, *, task_type: str | None = None, limit: int = 5, **scope: Unpack[ScopeArgs]
    ) -> list[RecalledTask]:
        """Past tasks like ``goal``, best first, each with the path that worked and its dead ends."""
        return recall_tasks(self._deps(), self._binding.scope(scope), clean_text(goal, field="goal"),
                            task_type=task_type, limit=check_count(limit, "limit", 1, 100))  # fmt: skip

    def recall_for(self, task: Task, *, limit: int = 5) -> list[RecalledTask]:
        """Recall for an open task: its goal and context, in its long-term scope, itself left out."""
        return recall_tasks(self._deps(), long_term_scope(task.scope), f"{task.goal}\n{task.context or ''}".strip(),
                            task_type=task.task_type, limit=limit, exclude=[task.id])  # fmt: skip

    def check_plan(
        self, task_id: str | None, planned_steps: Sequence[PlannedStep | Mapping[str, Any]], **scope: Unpack[ScopeArgs]
    ) -> list[PlanWarning]:
        """Warn, before the time is spent, about planned steps that match recorded dead ends (same action type,
        similar input or intent), with the evidence. With a task, its long-term scope is searched."""
        if task_id:
            return self.check_plan_for(self.get(task_id, **scope), planned_steps)
        return check_plan(self._deps(), self._binding.scope(scope), _planned(planned_steps))

    def check_plan_for(self, task: Task, planned_steps: Sequence[PlannedStep | Mapping[str, Any]]) -> list[PlanWarning]:
        """check_plan for an open task: its long-term scope, its goal and context as the topic."""
        topic = f"{task.goal}\n{task.context or ''}"
        return check_plan(self._deps(), long_term_scope(task.scope), _planned(planned_steps), topic)

    def alternatives(self, step_id: str, *, limit: int = 5, **scope: Unpack[ScopeArgs]) -> list[Alternative]:
        """Steps that succeeded beside steps like this one that failed (its own siblings first)."""
        step = self.step(step_id, **scope)
        return alternatives(self._deps(), long_term_scope(step.scope), step, limit=check_count(limit, "limit", 1, 100))

    def strategies(
        self,
        *,
        context: str | None = None,
        task_type: str | None = None,
        limit: int = 10,
        min_confidence: float | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> list[Strategy]:
        """Mined strategies: by ``context`` (a goal, a situation; most relevant and confident first), else most
        confident first. Below ``min_confidence`` (default ``[process] strategy_min_confidence``) left out."""
        floor = self._core.settings.process.strategy_min_confidence if min_confidence is None else min_confidence
        text = None if context is None else clean_text(context, field="context")
        return find_strategies(self._deps(), self._binding.scope(scope), text, [task_type] if task_type else None,
                               check_count(limit, "limit", 1, 1000), floor)  # fmt: skip

    def mine(self, task_type: str, **scope: Unpack[ScopeArgs]) -> list[Strategy]:
        """Mine the strategies of a task type now (finishing a task does it for its type)."""
        return mine_strategies(self._deps(), self._binding.scope(scope), task_type)

    def index(self, **scope: Unpack[ScopeArgs]) -> int:
        """Embed the scope's recorded units still waiting for a vector; returns how many."""
        return index_pending(self._deps(), self._binding.scope(scope))

    def list(
        self,
        *,
        status: Sequence[str] = (),
        task_type: Sequence[str] = (),
        limit: int = 50,
        offset: int = 0,
        **scope: Unpack[ScopeArgs],
    ) -> list[Task]:
        """Tasks of a scope, newest first."""
        query = parse_model(TaskQuery, {
            "scope": self._binding.scope(scope), "statuses": [task_status(s, allow_running=True) for s in status],
            "task_types": list(task_type), "limit": check_count(limit, "limit", 1, 100_000),
            "offset": check_count(offset, "offset", 0, 10**9),
        }, what="task query")  # fmt: skip
        return self._core.store.process.tasks(query)


def _planned(planned_steps: Sequence[PlannedStep | Mapping[str, Any]]) -> list[PlannedStep]:
    if isinstance(planned_steps, str | Mapping):
        raise InvalidInputError("planned_steps must be a list of {action, input, intent} steps")
    check_strings([dict(step) if isinstance(step, Mapping) else step for step in planned_steps], "planned_steps")
    return [parse_model(PlannedStep, step, what=f"planned_steps[{n}]") for n, step in enumerate(planned_steps)]
