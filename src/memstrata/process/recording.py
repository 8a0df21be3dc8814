"""Recording without boilerplate: context managers for a task and its steps, and decorators for tools.

::

    with memory.tasks.start("login returns 500 after deploy", task_type="debugging", user_id="u1") as task:
        with task.step("read", input="auth service logs") as step:
            step.output = read_logs()
        with task.step("run", input="flush the token cache", reasoning="stale tokens?") as step:
            step.output = flush()
            step.dead_end()                  # failed, and not worth trying again
        task.finish("fixed: rotate the signing key")

Each step is committed when it begins (status ``running``) and again when it ends (output, status, cost):
a process killed in between leaves every step it began in the store. Steps opened inside another step's
block become its children. An exception inside a step marks it failed (and is re-raised); one that leaves
the task block finishes the task as failed. Leaving the task block normally finishes it as succeeded
unless ``finish`` was called.

``@task.tool("search")`` records every call of a function as a step (arguments as input, the result as
output); ``@recorded("search")`` does the same for whatever task is open in the current context, and
just calls the function when none is.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from typing import Any, ParamSpec, Protocol, Self, TypeVar

from memstrata.errors import InvalidInputError
from memstrata.process.plan_check import PlannedStep, PlanWarning
from memstrata.process.recall import RecalledTask
from memstrata.process.writes import StepChange, StepInput
from memstrata.records.process import Artifact, Hypothesis, HypothesisStatus, Step, StepStatus, Task
from memstrata.validation import parse_model

P = ParamSpec("P")
R = TypeVar("R")
MAX_REPR = 4000

_current: ContextVar[TaskRecorder | None] = ContextVar("memstrata_current_task", default=None)


class TaskWriter(Protocol):
    """What recorders call on ``memory.tasks``: the recording half, and the reads a task handle offers."""

    def _record(self, task: Task, given: StepInput) -> Step: ...

    def _update(self, step: Step, change: StepChange) -> Step: ...

    def _finish(self, task: Task, status: str, outcome: str | None, confidence: float | None) -> Task: ...

    def _hypothesize(self, task: Task, text: str, step_id: str | None) -> Hypothesis: ...

    def _resolve(
        self, task: Task, hypothesis_id: str, status: HypothesisStatus, evidence: Sequence[str]
    ) -> Hypothesis: ...

    def _artifact(self, task: Task, name: str, text: str | None, uri: str | None, step_id: str | None,
                  metadata: Mapping[str, Any]) -> Artifact: ...  # fmt: skip

    def recall_for(self, task: Task, *, limit: int = 5) -> list[RecalledTask]: ...

    def check_plan_for(
        self, task: Task, planned_steps: Sequence[PlannedStep | Mapping[str, Any]]
    ) -> list[PlanWarning]: ...


def bounded_repr(value: object) -> str:
    """A value as step text: strings as they are, anything else as repr; cut at MAX_REPR, NUL and broken
    UTF-8 replaced (tools return anything)."""
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\x00", "\ufffd").encode("utf-8", "replace").decode("utf-8")
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 1] + "…"


class StepRecorder:
    """An open step. Set ``output`` (and ``tokens``) before the block ends; call ``dead_end()`` or ``fail()``
    to say it did not work."""

    def __init__(self, task: TaskRecorder, step: Step) -> None:
        self._task = task
        self.step = step
        self.output: str | None = None
        self.tokens: int | None = None
        self.confidence: float | None = None
        self.generalisable: bool | None = None
        self._tags: dict[str, Any] = {}
        self._status: StepStatus | None = None
        self._dead_end = False
        self._started = time.perf_counter()

    @property
    def id(self) -> str:
        return self.step.id

    def dead_end(self, why: str | None = None) -> None:
        """It did not work and is not worth trying again for goals like this one (``check_plan`` warns)."""
        self._dead_end, self._status = True, StepStatus.FAILED
        if why:
            self.output = f"{self.output}\n{why}" if self.output else why

    def fail(self, why: str | None = None) -> None:
        self._status = StepStatus.FAILED
        if why:
            self.output = f"{self.output}\n{why}" if self.output else why

    def tag(self, **tags: Any) -> None:
        self._tags.update(tags)

    def artifact(self, name: str, *, text: str | None = None, uri: str | None = None, **metadata: Any) -> Artifact:
        return self._task.artifact(name, text=text, uri=uri, step_id=self.id, **metadata)

    def close(self, error: BaseException | None = None) -> Step:
        status = self._status or (StepStatus.FAILED if error is not None else StepStatus.SUCCEEDED)
        output = self.output
        if error is not None and output is None:
            output = bounded_repr(f"{type(error).__name__}: {error}")
        change = StepChange(
            output=bounded_repr(output) if output is not None else None, status=status, dead_end=self._dead_end,
            confidence=self.confidence, generalisable=self.generalisable, tags=self._tags,
            cost_seconds=round(time.perf_counter() - self._started, 6), cost_tokens=self.tokens,
        )  # fmt: skip
        self.step = self._task.writer._update(self.step, change)
        return self.step


class _StepBlock:
    def __init__(self, task: TaskRecorder, given: StepInput) -> None:
        self._task, self._given = task, given
        self._open: StepRecorder | None = None

    def __enter__(self) -> StepRecorder:
        step = self._task.writer._record(self._task.task, self._given)
        self._open = StepRecorder(self._task, step)
        self._task._stack.append(step)
        return self._open

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        assert self._open is not None
        self._task._stack.pop()
        self._open.close(error)


class TaskRecorder:
    """An open task: record steps, hypotheses and artifacts; recall, check a plan; finish."""

    def __init__(self, writer: TaskWriter, task: Task) -> None:
        self.writer = writer
        self.task = task
        self._stack: list[Step] = []  # the open steps, innermost last
        self._token: Token[TaskRecorder | None] | None = None

    @property
    def id(self) -> str:
        return self.task.id

    def step(self, action: str, input: str, *, reasoning: str | None = None, parent_id: str | None = None,
             hypothesis: str | None = None, hypothesis_id: str | None = None) -> _StepBlock:  # fmt: skip
        """A step as a block: committed as ``running`` now, with its output and cost when the block ends. Inside
        another step's block it is that step's child, and tests the hypothesis the parent proposed or tested."""
        enclosing = self._stack[-1] if self._stack else None
        inherits = action != "hypothesize" and hypothesis is None and parent_id is None
        if hypothesis_id is None and inherits and enclosing is not None:
            hypothesis_id = enclosing.hypothesis_id
        given = parse_model(StepInput, {
            "action": action, "input": input, "reasoning": reasoning, "hypothesis": hypothesis,
            "parent_id": parent_id or (enclosing.id if enclosing else None), "hypothesis_id": hypothesis_id,
            "status": StepStatus.RUNNING,
        }, what="step")  # fmt: skip
        return _StepBlock(self, given)

    def record(self, action: str, input: str, **fields: Any) -> Step:
        """A step that already happened, in one call (``output``, ``status``, ``dead_end``, cost ...)."""
        fields.setdefault("parent_id", self._stack[-1].id if self._stack else None)
        return self.writer._record(self.task, parse_model(StepInput, {"action": action, "input": input, **fields},
                                                          what="step"))  # fmt: skip

    def hypothesize(self, text: str, *, step_id: str | None = None) -> Hypothesis:
        return self.writer._hypothesize(self.task, text, step_id)

    def support(self, hypothesis: Hypothesis | str, *evidence: Step | StepRecorder | str) -> Hypothesis:
        """Supported, by the steps (or step ids) that showed it."""
        return self.writer._resolve(self.task, _id(hypothesis), HypothesisStatus.SUPPORTED, [_id(e) for e in evidence])

    def refute(self, hypothesis: Hypothesis | str, *evidence: Step | StepRecorder | str) -> Hypothesis:
        """Refuted: the step that proposed it becomes a dead end, so the idea is flagged next time."""
        return self.writer._resolve(self.task, _id(hypothesis), HypothesisStatus.REFUTED, [_id(e) for e in evidence])

    def artifact(self, name: str, *, text: str | None = None, uri: str | None = None, step_id: str | None = None,
                 **metadata: Any) -> Artifact:  # fmt: skip
        return self.writer._artifact(self.task, name, text, uri, step_id, metadata)

    def recall(self, *, limit: int = 5) -> list[RecalledTask]:
        """Similar past tasks (this one left out) and what worked in them, from the task's long-term scope."""
        return self.writer.recall_for(self.task, limit=limit)

    def check_plan(self, planned_steps: Sequence[PlannedStep | Mapping[str, Any]]) -> list[PlanWarning]:
        """Warnings for planned steps that were dead ends before ({action, input, intent} each)."""
        return self.writer.check_plan_for(self.task, planned_steps)

    def finish(self, outcome: str | None = None, *, status: str = "succeeded", confidence: float | None = None) -> Task:
        self.task = self.writer._finish(self.task, status, outcome, confidence)
        return self.task

    def tool(self, action: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Record every call of the decorated function as a step of this task."""
        return _decorator(action, lambda: self)

    def __enter__(self) -> Self:
        self._token = _current.set(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> None:
        if self._token is not None:
            _current.reset(self._token)
        if not self.task.finished:
            if error is not None:
                self.finish(bounded_repr(f"{type(error).__name__}: {error}"), status="failed")
            else:
                self.finish()


def current_task() -> TaskRecorder | None:
    """The task whose ``with`` block encloses this call (per thread and asyncio task)."""
    return _current.get()


def _decorator(action: str, find: Callable[[], TaskRecorder | None]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            task = find()
            if task is None:
                return function(*args, **kwargs)
            shown = [repr(arg) for arg in args] + [f"{name}={value!r}" for name, value in kwargs.items()]
            with task.step(action, input=bounded_repr(f"{function.__name__}({', '.join(shown)})")) as step:
                result = function(*args, **kwargs)
                step.output = bounded_repr(result)
                return result

        return call

    return wrap


def recorded(action: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Record each call as a step of the task open in this context (none open: just call it)."""
    return _decorator(action, current_task)


def _id(record: Hypothesis | Step | StepRecorder | str) -> str:
    """A record's id: ``task.support(h, step)`` with what hypothesize(), record() or ``with task.step(...) as s``
    gave, or their ids (a Hypothesis passed where an id was expected reached the store as a raw object)."""
    if isinstance(record, Hypothesis | Step | StepRecorder):
        return record.id
    if not isinstance(record, str):
        raise InvalidInputError(f"expected a hypothesis or step (or its id), got {type(record).__name__}")
    return record
