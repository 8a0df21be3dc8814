"""A task's end: close it, summarise and compress it (``[process] compress_on_finish``), embed its units,
and re-mine the strategies of its type; compression and restore on request. Each change is one write."""

from __future__ import annotations

from memstrata.errors import ConflictError
from memstrata.process.compress import plan_compress, plan_restore
from memstrata.process.deps import ProcessDeps
from memstrata.process.indexing import index_pending
from memstrata.process.mining import mine_strategies
from memstrata.process.trees import TaskTree
from memstrata.records.process import Task, TaskStatus
from memstrata.storage.protocol import WriteBatch
from memstrata.write.pipeline import long_term_scope


def _compressed(deps: ProcessDeps, task: Task) -> tuple[Task, WriteBatch]:
    store = deps.store.process
    steps = store.steps(task.scope, task_ids=[task.id])
    path = store.useful_paths(task.scope, [task.id]).get(task.id, [])
    return plan_compress(deps, TaskTree(task=task, steps=tuple(steps)), path, deps.clock())


def finish_task(deps: ProcessDeps, task: Task, closed: Task) -> Task:
    """Store ``closed`` (``task`` with its outcome); a retry with the same ending changes nothing."""
    if task.finished:
        if task.status == closed.status and task.outcome == closed.outcome:
            return task
        raise ConflictError(f"task {task.id} already finished as {task.status.value}")
    batch = WriteBatch(tasks=[closed])
    if deps.settings.compress_on_finish:
        closed, batch = _compressed(deps, closed)
    deps.store.write(batch)
    index_pending(deps, task.scope)
    if closed.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
        mine_strategies(deps, long_term_scope(task.scope), task.task_type)
    return closed


def compress_task(deps: ProcessDeps, task: Task) -> Task:
    if not task.finished:
        raise ConflictError(f"task {task.id} is still running; finish it first")
    if task.compressed:
        return task
    compressed, batch = _compressed(deps, task)
    deps.store.write(batch)
    index_pending(deps, task.scope)
    return compressed


def restore_task(deps: ProcessDeps, task: Task) -> Task:
    if not task.compressed:
        return task
    steps = deps.store.process.steps(task.scope, task_ids=[task.id])
    restored, batch = plan_restore(deps, TaskTree(task=task, steps=tuple(steps)), deps.clock())
    deps.store.write(batch)
    return restored
