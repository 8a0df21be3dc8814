"""Dead-end avoidance and alternatives: compare steps (planned, or just failed) with recorded ones.

A planned step matches a recorded step when the action type is the same and the input and intent are
similar (``matching.py``: the read path finds candidates, a closer look on what the texts do not share
scores them against ``dead_end_similarity``); the store says which matches were dead ends. Archived units
(of compressed tasks) are searched too: compression shortens recall, it does not forget what failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, model_validator

from memstrata.process.deps import ProcessDeps
from memstrata.process.indexing import index_pending
from memstrata.process.matching import closer_look, similar_units
from memstrata.process.units import step_text
from memstrata.records.process import Action, Hypothesis, HypothesisStatus, Step, Task, TaskQuery
from memstrata.types import Frozen, Scope, StorableText


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
    similarity: float  # the match score (``matching.py``): cosine and the closer look, averaged
    cosine: float  # the first look alone: cosine similarity of the two texts
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


def _tasks(deps: ProcessDeps, scope: Scope, steps: Sequence[Step]) -> dict[str, Task]:
    ids = tuple(dict.fromkeys(step.task_id for step in steps))
    if not ids:
        return {}
    return {task.id: task for task in deps.store.process.tasks(TaskQuery(scope=scope, ids=ids, limit=len(ids)))}


def check_plan(deps: ProcessDeps, scope: Scope, planned: Sequence[PlannedStep], context: str = "") -> list[PlanWarning]:
    """Warnings for planned steps that match recorded dead ends, most similar first within each step."""
    index_pending(deps, scope)
    found = [similar_units(deps, scope, step.action, step_text(step.input, step.intent)) for step in planned]
    wanted = list(dict.fromkeys(step_id for candidates in found for step_id, _ in candidates))
    dead = {step.id: step for step in deps.store.process.steps(scope, step_ids=wanted) if step.dead_end}
    tasks = _tasks(deps, scope, list(dead.values()))
    refuted = _refuted(deps, scope, list(dead.values()))
    warnings = []
    for index, candidates in enumerate(found):
        known = [(dead[step_id], cosine) for step_id, cosine in candidates
                 if step_id in dead and dead[step_id].task_id in tasks]  # fmt: skip
        compared = [(step, tasks[step.task_id].goal, cosine) for step, cosine in known]
        for step, score, cosine in closer_look(deps, planned[index].input, compared, context):
            warnings.append(PlanWarning(index=index, planned=planned[index], dead_end=step, task=tasks[step.task_id],
                                        similarity=score, cosine=cosine, refuted=refuted.get(step.id, ())))  # fmt: skip
    return warnings


def _refuted(deps: ProcessDeps, scope: Scope, steps: Sequence[Step]) -> dict[str, tuple[Hypothesis, ...]]:
    """Refuted hypotheses per step: the one it tested, one it proposed, or one its parent proposed."""
    task_ids = list(dict.fromkeys(step.task_id for step in steps))
    hypotheses = [h for h in deps.store.process.hypotheses(scope, task_ids=task_ids)
                  if h.status == HypothesisStatus.REFUTED]  # fmt: skip
    by_step: dict[str, tuple[Hypothesis, ...]] = {}
    for step in steps:
        # Only the step's own task's hypotheses, and only through links that exist: a hypothesis proposed by no
        # step (step_id None) matched every top-level step's missing parent, in every task.
        linked = tuple(
            h
            for h in hypotheses
            if h.task_id == step.task_id
            and (h.id == step.hypothesis_id or (h.step_id is not None and h.step_id in (step.id, step.parent_id)))
        )
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
    store = deps.store.process
    found = similar_units(deps, scope, step.action, step_text(step.input, step.reasoning))
    recorded = {s.id: s for s in store.steps(scope, step_ids=[step_id for step_id, _ in found]) if not s.useful}
    goals = _tasks(deps, scope, [*recorded.values(), step])
    compared = [(recorded[step_id], goals[recorded[step_id].task_id].goal, cosine) for step_id, cosine in found
                if step_id in recorded and step_id != step.id and recorded[step_id].task_id in goals]  # fmt: skip
    own = goals[step.task_id].goal if step.task_id in goals else ""
    similar = {matched.id: score for matched, score, _ in closer_look(deps, step.input, compared, own)}
    similar[step.id] = 1.0
    failed = {s.id: s for s in recorded.values() if s.id in similar}
    failed[step.id] = step
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
        found_one = Alternative(failed=lineage[failed_id], sibling=sibling, task=tasks[sibling.task_id],
                                similarity=round(inherited.get(failed_id, 0.0), 4))  # fmt: skip
        if sibling.id not in best or found_one.similarity > best[sibling.id].similarity:
            best[sibling.id] = found_one
    return sorted(best.values(), key=lambda alternative: alternative.similarity, reverse=True)[:limit]
