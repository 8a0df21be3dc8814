"""REST endpoints for process memory (``memory.tasks``): start a task, record steps as they happen, mark
hypotheses, finish; recall what worked in similar tasks, check a plan against recorded dead ends, list the
strategies mined from finished tasks. Same pattern as ``routes.py``: the key's scopes are checked, then the
Memory facade is called. Creating a task, and the reads that take text, carry the scope in the body; the
rest name the task in the path and the scope in the query string.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field

from memstrata.api.models import NO_NUL, TEXT_PATTERN, Body, Count, Flag, ScopedBody, Seconds, Tokens, Unit
from memstrata.api.routes import ERRORS, CallerDep, ScopeDep, problems
from memstrata.errors import NotFoundError
from memstrata.process.plan_check import Alternative, PlanWarning
from memstrata.process.recall import RecalledTask
from memstrata.process.trees import TaskTree
from memstrata.records.process import Artifact, Hypothesis, Step, StepStatus, Strategy, Task, TaskStatus

router = APIRouter(prefix="/v1/tasks", responses=ERRORS, tags=["tasks"])
FINISHED = problems(s409="the task is finished (or finished otherwise); start a new task to record more")
ACTION = r"^[a-z][a-z0-9_\-]{0,63}$"
RecordId = Annotated[str, Path(min_length=1, max_length=256, pattern=TEXT_PATTERN)]
Text = Annotated[str, Field(pattern=TEXT_PATTERN, max_length=1_000_000)]
Id = Annotated[str, Field(min_length=1, max_length=256, pattern=TEXT_PATTERN)]


class StartTask(ScopedBody):
    goal: Text = Field(description="what the task is for, in the user's language")
    context: Text | None = None
    constraints: list[Text] = Field(default_factory=list, max_length=100)
    task_type: str = Field(default="general", pattern=ACTION, description="debugging, research, analysis, ...")
    metadata: dict[str, Any] | None = None


class RecordStep(Body):
    action: str = Field(pattern=ACTION, description="search, query, run, read, hypothesize, summarize, ask_human...")
    input: Text = Field(description="what the step did: the query, command, question")
    output: str | None = Field(default=None, pattern=NO_NUL, max_length=1_000_000)
    reasoning: Text | None = Field(default=None, description="why: the intent it followed")
    parent_id: Id | None = Field(default=None, description="the step it followed from (none: top level)")
    hypothesis: Text | None = Field(default=None, description="a hypothesis this step proposes")
    hypothesis_id: Id | None = Field(default=None, description="the hypothesis this step tests")
    status: StepStatus = StepStatus.SUCCEEDED
    dead_end: Flag = Field(default=False, description="not worth trying again for goals like this one")
    confidence: Unit | None = None
    generalisable: Flag | None = None
    tags: dict[str, Any] | None = None
    cost_seconds: Seconds | None = None
    cost_tokens: Tokens | None = None


class ChangeStep(Body):
    output: str | None = Field(default=None, pattern=NO_NUL, max_length=1_000_000)
    status: StepStatus | None = None
    dead_end: Flag | None = None
    confidence: Unit | None = None
    generalisable: Flag | None = None
    tags: dict[str, Any] | None = Field(default=None, description="merged into the step's tags")
    cost_seconds: Seconds | None = None
    cost_tokens: Tokens | None = None


class Propose(Body):
    text: Text
    step_id: Id | None = Field(default=None, description="the step that proposed it")


class Resolve(Body):
    status: Literal["open", "supported", "refuted"]
    evidence: list[Id] = Field(default_factory=list, max_length=1000, description="ids of the steps that show it")


class AddArtifact(Body):
    name: str = Field(min_length=1, max_length=500, pattern=TEXT_PATTERN)
    text: Text | None = None
    uri: str | None = Field(default=None, max_length=4000, pattern=TEXT_PATTERN, description="a file path or URL")
    step_id: Id | None = None
    metadata: dict[str, Any] | None = None


class Finish(Body):
    outcome: Text | None = None
    status: Literal["succeeded", "failed", "abandoned"] = "succeeded"
    confidence: Unit | None = None


class Recall(ScopedBody):
    goal: Text
    task_type: str | None = Field(default=None, pattern=ACTION, description="the new task's type: its weights")
    limit: Count = Field(default=5, ge=1, le=100)


class PlannedStepIn(Body):
    action: str = Field(pattern=ACTION)
    input: Text
    intent: Text | None = None


class CheckPlan(ScopedBody):
    steps: list[PlannedStepIn] = Field(min_length=1, max_length=100)
    task_id: Id | None = Field(default=None, description="the task the plan is for: its long-term scope is searched")


def _given(body: Body) -> dict[str, Any]:
    return body.model_dump(exclude_unset=True, exclude_none=True)


@router.post("", status_code=201, response_model=Task)
def start_task(body: StartTask, call: CallerDep) -> Task:
    """Start a task; record its steps with POST /v1/tasks/{task_id}/steps."""
    return call.memory.tasks.begin(body.goal, context=body.context, constraints=body.constraints,
                                   task_type=body.task_type, metadata=body.metadata, **call.scope(body))  # fmt: skip


@router.get("", response_model=list[Task])
def list_tasks(
    call: CallerDep,
    ids: ScopeDep,
    status: Annotated[list[TaskStatus] | None, Query()] = None,
    task_type: Annotated[list[Annotated[str, Query(pattern=ACTION)]] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> list[Task]:
    """Tasks of a scope, newest first."""
    return call.memory.tasks.list(status=[s.value for s in status or ()], task_type=task_type or (), limit=limit,
                                  offset=offset, **call.scope(ids))  # fmt: skip


@router.post("/recall", response_model=list[RecalledTask])
def recall(body: Recall, call: CallerDep) -> list[RecalledTask]:
    """Past tasks like ``goal``, best first, each with the path that worked and its dead ends."""
    return call.memory.tasks.recall(body.goal, task_type=body.task_type, limit=body.limit, **call.scope(body))


@router.post("/check-plan", response_model=list[PlanWarning])
def check_plan(body: CheckPlan, call: CallerDep) -> list[PlanWarning]:
    """Warnings for planned steps that match recorded dead ends (same action, similar input), with evidence."""
    steps = [step.model_dump(exclude_none=True) for step in body.steps]
    return call.memory.tasks.check_plan(body.task_id, steps, **call.scope(body))


@router.get("/strategies", response_model=list[Strategy])
def strategies(
    call: CallerDep,
    ids: ScopeDep,
    # 4,000 characters: percent-encoded (up to 12 bytes each) the URL stays under the HTTP server's 64 KB limit.
    context: Annotated[str | None, Query(max_length=4_000, pattern=TEXT_PATTERN)] = None,
    task_type: Annotated[str | None, Query(pattern=ACTION)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 10,
    min_confidence: Annotated[float | None, Query(ge=0, le=1)] = None,
) -> list[Strategy]:
    """Strategies mined from finished tasks: most relevant to ``context`` (and most confident) first."""
    return call.memory.tasks.strategies(context=context, task_type=task_type, limit=limit,
                                        min_confidence=min_confidence, **call.scope(ids))  # fmt: skip


@router.get("/{task_id}", response_model=TaskTree)
def get_task(task_id: RecordId, call: CallerDep, ids: ScopeDep) -> TaskTree:
    """The task with its steps (in recording order), hypotheses and artifacts."""
    return call.memory.tasks.tree(task_id, **call.scope(ids))


@router.get(
    "/{task_id}/tree", response_class=Response,
    responses={200: {"description": "the step tree", "content": {"text/plain": {"schema": {"type": "string"}}}}},
)  # fmt: skip
def task_tree(
    task_id: RecordId, call: CallerDep, ids: ScopeDep, format: Literal["text", "mermaid"] = "text"
) -> Response:
    """The step tree as indented text or as a Mermaid flowchart (text/plain)."""
    return Response(call.memory.tasks.render(task_id, format, **call.scope(ids)), media_type="text/plain")


@router.post("/{task_id}/steps", status_code=201, response_model=Step, responses=FINISHED)
def record_step(task_id: RecordId, body: RecordStep, call: CallerDep, ids: ScopeDep) -> Step:
    """Record one step; it is stored at once (its embedding waits for the task's end or the next recall)."""
    given = _given(body)
    return call.memory.tasks.record_step(task_id, given.pop("action"), given.pop("input"), **given, **call.scope(ids))


@router.patch("/{task_id}/steps/{step_id}", response_model=Step)
def change_step(task_id: RecordId, step_id: RecordId, body: ChangeStep, call: CallerDep, ids: ScopeDep) -> Step:
    """End a step (output, status, cost) or tag it (dead_end, confidence, generalisable, tags)."""
    scope = call.scope(ids)
    if call.memory.tasks.step(step_id, **scope).task_id != task_id:
        raise NotFoundError(f"no step {step_id} in task {task_id}")
    return call.memory.tasks.update_step(step_id, **_given(body), **scope)


@router.get("/{task_id}/steps/{step_id}/alternatives", response_model=list[Alternative])
def step_alternatives(
    task_id: RecordId, step_id: RecordId, call: CallerDep, ids: ScopeDep, limit: Annotated[int, Query(ge=1, le=100)] = 5
) -> list[Alternative]:
    """Steps that succeeded beside steps like this one that failed."""
    scope = call.scope(ids)
    if call.memory.tasks.step(step_id, **scope).task_id != task_id:
        raise NotFoundError(f"no step {step_id} in task {task_id}")
    return call.memory.tasks.alternatives(step_id, limit=limit, **scope)


@router.post("/{task_id}/hypotheses", status_code=201, response_model=Hypothesis)
def propose(task_id: RecordId, body: Propose, call: CallerDep, ids: ScopeDep) -> Hypothesis:
    return call.memory.tasks.hypothesize(task_id, body.text, step_id=body.step_id, **call.scope(ids))


@router.post("/{task_id}/hypotheses/{hypothesis_id}", response_model=Hypothesis)
def resolve(task_id: RecordId, hypothesis_id: RecordId, body: Resolve, call: CallerDep, ids: ScopeDep) -> Hypothesis:
    """Mark a hypothesis supported or refuted with the steps that show it; refuting one makes the step that
    proposed it a dead end."""
    task = call.memory.tasks.tree(task_id, **call.scope(ids))
    if hypothesis_id not in {hypothesis.id for hypothesis in task.hypotheses}:
        raise NotFoundError(f"no hypothesis {hypothesis_id} in task {task_id}")
    return call.memory.tasks.resolve_hypothesis(hypothesis_id, body.status, evidence=body.evidence,
                                                **call.scope(ids))  # fmt: skip


@router.post("/{task_id}/artifacts", status_code=201, response_model=Artifact)
def add_artifact(task_id: RecordId, body: AddArtifact, call: CallerDep, ids: ScopeDep) -> Artifact:
    """Keep a by-product: text, or a file reference (uri) described by text. Indexed for search."""
    return call.memory.tasks.add_artifact(task_id, body.name, text=body.text, uri=body.uri, step_id=body.step_id,
                                          metadata=body.metadata, **call.scope(ids))  # fmt: skip


@router.post("/{task_id}/finish", response_model=Task, responses=FINISHED)
def finish(task_id: RecordId, body: Finish, call: CallerDep, ids: ScopeDep) -> Task:
    """Close the task with its outcome; it is summarised, its units embedded, strategies re-mined."""
    return call.memory.tasks.finish(task_id, body.outcome, status=body.status, confidence=body.confidence,
                                    **call.scope(ids))  # fmt: skip


@router.post("/{task_id}/compress", response_model=Task, responses=problems(s409="the task is still running"))
def compress(task_id: RecordId, call: CallerDep, ids: ScopeDep) -> Task:
    """Let the summary stand in for the step chain in recall (the chain is archived, restorable)."""
    return call.memory.tasks.compress(task_id, **call.scope(ids))


@router.post("/{task_id}/restore", response_model=Task)
def restore(task_id: RecordId, call: CallerDep, ids: ScopeDep) -> Task:
    """Bring a compressed task's step chain back into recall."""
    return call.memory.tasks.restore(task_id, **call.scope(ids))
