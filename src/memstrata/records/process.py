"""Process-memory records: how an agent searched, kept beside what its users said, in the same store.

A :class:`Task` is one exploratory job (a bug to fix, a question to research). Its :class:`Step`\\ s form a
tree: a step's parent is the step it followed from (None: a top-level step of the task). A
:class:`Hypothesis` names the steps that are its evidence; an :class:`Artifact` keeps what a step produced.
A :class:`Strategy` is mined from finished tasks of one type: an action sequence, how often it led to
success, and the failed tasks that used it (counter-examples).

Records are frozen and validated where built; the facade checks texts against the configured limits first.
The store writes each record whole (insert or replace within its own scope).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, Field

from memstrata.patterns import lazy_pattern
from memstrata.types import Frozen, JsonDict, Scope, StorableText, UtcDatetime

_ACTION = lazy_pattern(r"^[a-z][a-z0-9_\-]{0,63}$")

# Memory kinds of the index units: the rows of ``memories`` that make process records searchable through the
# ordinary read path (keyword + dense). Their lifecycle is the process record's, not decay's.
TASK_KIND = "process_task"  # a task's goal and context
STEP_KIND = "process_step"  # a step's input and reasoning (what it tried, and why)
SUMMARY_KIND = "process_summary"  # a finished task, compressed: stands in for its chain in retrieval
ARTIFACT_KIND = "process_artifact"  # a text artifact, or a file reference with its description
STRATEGY_KIND = "process_strategy"  # a mined strategy: trigger and recommended steps
UNIT_KINDS = (TASK_KIND, STEP_KIND, SUMMARY_KIND, ARTIFACT_KIND, STRATEGY_KIND)


class ActionType(StrEnum):
    """Built-in action types. Any other lowercase identifier is accepted too (``run_sql``, ``bisect``)."""

    SEARCH = "search"
    QUERY = "query"
    RUN = "run"
    READ = "read"
    HYPOTHESIZE = "hypothesize"
    SUMMARIZE = "summarize"
    ASK_HUMAN = "ask_human"


def validate_action(value: str) -> str:
    if not _ACTION.match(value):
        raise ValueError(f"action {value!r} must be a lowercase identifier such as 'search' or 'run_tests'")
    return value


def validate_task_type(value: str) -> str:
    if not _ACTION.match(value):
        raise ValueError(f"task_type {value!r} must be a lowercase identifier such as 'debugging' or 'research'")
    return value


Action = Annotated[str, AfterValidator(validate_action)]
TaskType = Annotated[str, AfterValidator(validate_task_type)]


class TaskStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABANDONED = "abandoned"


FINISHED = (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.ABANDONED)


class StepStatus(StrEnum):
    RUNNING = "running"  # recorded when it began; a crash leaves it so
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class HypothesisStatus(StrEnum):
    OPEN = "open"
    SUPPORTED = "supported"
    REFUTED = "refuted"


class Task(Frozen):
    id: str
    scope: Scope
    goal: StorableText
    context: StorableText | None = None
    constraints: tuple[StorableText, ...] = ()
    task_type: TaskType = "general"
    status: TaskStatus = TaskStatus.RUNNING
    outcome: StorableText | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)  # how sure the agent is of the outcome
    summary: StorableText | None = None
    summary_source: str | None = None  # "extractive" or "model:<id>"; why a model summary was refused, if so
    compressed: bool = False  # the summary unit stands in for the chain's units in retrieval
    memory_id: str  # the goal's index unit
    summary_memory_id: str | None = None
    metadata: JsonDict = Field(default_factory=dict)
    started_at: UtcDatetime
    ended_at: UtcDatetime | None = None
    updated_at: UtcDatetime

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


class Step(Frozen):
    id: str
    task_id: str
    scope: Scope
    parent_id: str | None = None
    action: Action
    input: StorableText
    output: StorableText | None = None
    reasoning: StorableText | None = None  # why this step: the intent it followed
    hypothesis_id: str | None = None  # the hypothesis this step tests or proposes
    status: StepStatus = StepStatus.RUNNING
    # Utility tags: dead_end says "do not try this again for this kind of goal"; the rest weigh recall.
    dead_end: bool = False
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    generalisable: bool | None = None
    tags: JsonDict = Field(default_factory=dict)  # user-defined utility tags
    cost_seconds: float | None = Field(default=None, ge=0.0)
    cost_tokens: int | None = Field(default=None, ge=0, le=2**62)
    memory_id: str  # the step's index unit
    started_at: UtcDatetime
    ended_at: UtcDatetime | None = None

    @property
    def useful(self) -> bool:
        """Part of a successful path: it worked and was not a detour."""
        return self.status == StepStatus.SUCCEEDED and not self.dead_end


class Hypothesis(Frozen):
    id: str
    task_id: str
    scope: Scope
    text: StorableText
    status: HypothesisStatus = HypothesisStatus.OPEN
    step_id: str | None = None  # the step that proposed it
    evidence: tuple[str, ...] = ()  # ids of the steps that support or refute it
    created_at: UtcDatetime
    updated_at: UtcDatetime


class Artifact(Frozen):
    """A by-product worth keeping: text (a summary, a snippet, a query) or a reference to a file."""

    id: str
    task_id: str
    scope: Scope
    step_id: str | None = None
    name: StorableText = Field(min_length=1, max_length=500)
    text: StorableText | None = None
    uri: StorableText | None = Field(default=None, max_length=4000)  # a file path or URL; the file is not copied
    memory_id: str
    metadata: JsonDict = Field(default_factory=dict)
    created_at: UtcDatetime


class StrategyStep(Frozen):
    action: Action
    example: StorableText | None = None  # the input of this step in the latest task that succeeded with it


class CounterExample(Frozen):
    task_id: str
    goal: StorableText
    outcome: StorableText | None = None


class Strategy(Frozen):
    """An action sequence that led to success in tasks of one type, with its evidence.

    ``confidence`` is the Laplace-smoothed success rate (successes + 1) / (tasks + 2) over the finished
    tasks of the type that contain the sequence (in order, other steps between allowed)."""

    id: str
    scope: Scope
    task_type: TaskType
    trigger: JsonDict  # {"task_type", "first_action", "keywords": goal words common to the tasks it worked in}
    steps: tuple[StrategyStep, ...]
    expected_outcome: StorableText | None = None
    confidence: float = Field(ge=0.0, le=1.0)
    support: int = Field(ge=0)  # finished tasks containing the sequence
    successes: int = Field(ge=0)
    failures: int = Field(ge=0)
    example_task_ids: tuple[str, ...] = ()  # succeeded tasks, newest first
    counter_examples: tuple[CounterExample, ...] = ()  # failed tasks, newest first
    memory_id: str
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @property
    def actions(self) -> tuple[str, ...]:
        return tuple(step.action for step in self.steps)


class TaskQuery(Frozen):
    """Which tasks to list: by ids or an id prefix, status and type, newest first by default."""

    scope: Scope
    ids: tuple[str, ...] | None = None
    id_prefix: str | None = Field(default=None, min_length=1, max_length=256)
    statuses: tuple[TaskStatus, ...] = ()
    task_types: tuple[TaskType, ...] = ()
    limit: int = Field(default=100, ge=1, le=100_000)
    offset: int = Field(default=0, ge=0, le=10**9)
    newest_first: bool = True


# Export record types by name (``memstrata export`` lines carry ``"type": <name>``).
PROCESS_RECORDS: dict[str, type[Task | Step | Hypothesis | Artifact | Strategy]] = {
    "task": Task,
    "task_step": Step,
    "task_hypothesis": Hypothesis,
    "task_artifact": Artifact,
    "task_strategy": Strategy,
}
