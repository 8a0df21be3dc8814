"""Dead-end avoidance and alternatives: compare steps (planned, or just failed) with recorded ones.

A planned step matches a recorded step when the action type is the same and the input and intent are
similar: the step units of that action are searched (the read path, with the action as a metadata filter
and ``dead_end_similarity`` as the cosine threshold), and the store says which of the matches were dead
ends. Archived units (of compressed tasks) are searched too: compression shortens recall, it does not
forget what failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, model_validator

from memstrata.process.deps import ProcessDeps
from memstrata.process.indexing import index_pending
from memstrata.process.model import STEP_KIND, Action, Hypothesis, HypothesisStatus, Step, Task, TaskQuery
from memstrata.process.units import step_text
from memstrata.query import Filters, SearchQuery
from memstrata.types import Frozen, MemoryStatus, Scope, StorableText


class PlannedStep(Frozen):
    action: Action
    input: StorableText = Field(min_length=1)
    intent: StorableText | None = None  # why the agent means to do it (compared like a recorded step's reasoning)


class PlanWarning(Frozen):
    """A planned step that was a dead end before, with the evidence."""

    index: int  # position of the planned step
    planned: PlannedStep
    dead_end: Step  # the recorded step it matches
    task: Task  # where it was recorded: goal, outcome
    similarity: float
    refuted: tuple[Hypothesis, ...] = ()  # refuted hypotheses the dead end proposed or tested

    message: str = ""  # one line for an agent or a person: what was planned, what it matches, what happened

    @model_validator(mode="after")
    def _explained(self) -> PlanWarning:
        if not self.message:
            why = f"; hypothesis refuted: {self.refuted[0].text}" if self.refuted else ""
            said = f" (it gave: {self.dead_end.output})" if self.dead_end.output else ""
            text = (f"step {self.index} ({self.planned.action}: {self.planned.input}) matches a dead end of task "
                    f"{self.task.id[:12]} '{self.task.goal}': {self.dead_end.input}{said}{why}")  # fmt: skip
            object.__setattr__(self, "message", text)
        return self


class Alternative(Frozen):
    """A step that succeeded beside one that failed like yours."""

    failed: Step  # the recorded step similar to yours (or yours itself) that failed or was a dead end
    sibling: Step  # what succeeded under the same parent in the same task
    task: Task
    similarity: float


def _similar_steps(deps: ProcessDeps, scope: Scope, action: str, text: str) -> list[tuple[str, float]]:
    """(step id, cosine similarity) of recorded steps of ``action`` like ``text``, most similar first."""
    query = SearchQuery(
        scope=scope, text=text, limit=deps.settings.candidates, threshold=deps.settings.dead_end_similarity,
        filters=Filters(kind=(STEP_KIND,), status=(MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED),
                        metadata={"action": action}),
        now=deps.clock(), lifecycle=False, understand_time=False, graph=False, record_access=False,
    )  # fmt: skip
    found: dict[str, float] = {}
    for hit in deps.search(query):
        step_id, similarity = hit.memory.metadata.get("step_id"), hit.breakdown.vector_similarity
        if isinstance(step_id, str) and similarity is not None:
            found.setdefault(step_id, similarity)
    return sorted(found.items(), key=lambda pair: pair[1], reverse=True)


def _tasks(deps: ProcessDeps, scope: Scope, steps: Sequence[Step]) -> dict[str, Task]:
    ids = tuple(dict.fromkeys(step.task_id for step in steps))
    if not ids:
        return {}
    return {task.id: task for task in deps.store.process.tasks(TaskQuery(scope=scope, ids=ids, limit=len(ids)))}


def check_plan(deps: ProcessDeps, scope: Scope, planned: Sequence[PlannedStep]) -> list[PlanWarning]:
    """Warnings for planned steps that match recorded dead ends, most similar first within each step."""
    index_pending(deps, scope)
    candidates: list[tuple[int, str, float]] = []
    for index, step in enumerate(planned):
        for step_id, similarity in _similar_steps(deps, scope, step.action, step_text(step.input, step.intent)):
            candidates.append((index, step_id, similarity))
    recorded = {step.id: step for step in deps.store.process.steps(scope, step_ids=[c[1] for c in candidates])}
    dead = {step_id: step for step_id, step in recorded.items() if step.dead_end}
    tasks = _tasks(deps, scope, list(dead.values()))
    refuted = _refuted(deps, scope, list(dead.values()))
    warnings = [
        PlanWarning(index=index, planned=planned[index], dead_end=dead[step_id], task=tasks[dead[step_id].task_id],
                    similarity=round(similarity, 4), refuted=refuted.get(step_id, ()))
        for index, step_id, similarity in candidates
        if step_id in dead and dead[step_id].task_id in tasks
    ]  # fmt: skip
    return sorted(warnings, key=lambda warning: (warning.index, -warning.similarity))


def _refuted(deps: ProcessDeps, scope: Scope, steps: Sequence[Step]) -> dict[str, tuple[Hypothesis, ...]]:
    """Refuted hypotheses per step: the one it tested, one it proposed, or one its parent proposed."""
    task_ids = list(dict.fromkeys(step.task_id for step in steps))
    hypotheses = [h for h in deps.store.process.hypotheses(scope, task_ids=task_ids)
                  if h.status == HypothesisStatus.REFUTED]  # fmt: skip
    by_step: dict[str, tuple[Hypothesis, ...]] = {}
    for step in steps:
        linked = tuple(h for h in hypotheses if h.id == step.hypothesis_id or h.step_id in (step.id, step.parent_id))
        if linked:
            by_step[step.id] = linked
    return by_step


def _failed_lineage(deps: ProcessDeps, scope: Scope, failed: dict[str, Step]) -> dict[str, Step]:
    """The failed steps and their ancestors that failed too (an attempt under a refuted hypothesis: the
    alternative may be a sibling of the hypothesis, not of the attempt)."""
    task_ids = list(dict.fromkeys(step.task_id for step in failed.values()))
    every = {step.id: step for step in deps.store.process.steps(scope, task_ids=task_ids)}
    lineage = dict(failed)
    for step in failed.values():
        parent = every.get(step.parent_id or "")
        while parent is not None and not parent.useful and parent.id not in lineage:
            lineage[parent.id] = parent
            parent = every.get(parent.parent_id or "")
    return lineage


def alternatives(deps: ProcessDeps, scope: Scope, step: Step, *, limit: int = 5) -> list[Alternative]:
    """Steps that succeeded where a step like ``step`` failed: siblings that worked of the step itself and of
    similar recorded steps (same action) that failed or were dead ends, and of their failed ancestors."""
    index_pending(deps, scope)
    similar = dict(_similar_steps(deps, scope, step.action, step_text(step.input, step.reasoning)))
    similar[step.id] = 1.0
    store = deps.store.process
    failed = {s.id: s for s in store.steps(scope, step_ids=list(similar)) if not s.useful}
    failed.setdefault(step.id, step)
    lineage = _failed_lineage(deps, scope, failed)
    inherited = dict(similar)
    for failed_step in failed.values():  # an ancestor is as relevant as the similar step under it
        parent = lineage.get(failed_step.parent_id or "")
        while parent is not None:
            inherited[parent.id] = max(inherited.get(parent.id, 0.0), similar.get(failed_step.id, 0.0))
            parent = lineage.get(parent.parent_id or "")
    pairs = store.succeeded_siblings(scope, list(lineage))
    tasks = _tasks(deps, scope, [sibling for _, sibling in pairs])
    best: dict[str, Alternative] = {}
    for failed_id, sibling in pairs:
        if sibling.task_id not in tasks or sibling.id in lineage:
            continue
        found = Alternative(failed=lineage[failed_id], sibling=sibling, task=tasks[sibling.task_id],
                            similarity=round(inherited.get(failed_id, 0.0), 4))  # fmt: skip
        if sibling.id not in best or found.similarity > best[sibling.id].similarity:
            best[sibling.id] = found
    return sorted(best.values(), key=lambda alternative: alternative.similarity, reverse=True)[:limit]
