"""Compression: a finished task's summary unit stands in for its chain in retrieval.

The step units are archived (recall searches active units only; the goal's unit stays), the summary unit is added (or,
when the task was compressed before, rewritten and made active again), and the task records its summary.
Nothing is deleted: the records keep every step, ``check_plan`` still searches archived step units, and
:func:`plan_restore` brings the chain's units back (archiving the summary). Status changes go through the
lifecycle's one status path, with history naming the action.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memstrata.lifecycle.status import status_batch
from memstrata.process.deps import ProcessDeps
from memstrata.process.summary import EXTRACTIVE, write_summary
from memstrata.process.trees import TaskTree
from memstrata.process.units import ACTOR, added, unit
from memstrata.records.history import history_event
from memstrata.records.process import SUMMARY_KIND, Step, Task
from memstrata.storage.protocol import WriteBatch
from memstrata.types import HistoryAction, MemoryItem, MemoryStatus


def _units(deps: ProcessDeps, tree: TaskTree) -> tuple[list[MemoryItem], MemoryItem | None]:
    """(step units, summary unit) as stored now. The goal unit stays active: a goal is not part of the chain,
    and it is what a new task's goal is most like."""
    task = tree.task
    wanted = [step.memory_id for step in tree.steps]
    found = {item.id: item for item in deps.store.get(task.scope, [*wanted, task.summary_memory_id or ""])}
    return [found[memory_id] for memory_id in wanted if memory_id in found], found.get(task.summary_memory_id or "")


def _merged(*batches: WriteBatch) -> WriteBatch:
    return WriteBatch(
        vectors=[pair for batch in batches for pair in batch.vectors],
        embedding_id=next((batch.embedding_id for batch in batches if batch.embedding_id), None),
        cache_entries=[pair for batch in batches for pair in batch.cache_entries],
        inserts=[item for batch in batches for item in batch.inserts],
        replacements=[pair for batch in batches for pair in batch.replacements],
        status_changes=[change for batch in batches for change in batch.status_changes],
        history=[event for batch in batches for event in batch.history],
        tasks=[task for batch in batches for task in batch.tasks],
    )


def plan_compress(deps: ProcessDeps, tree: TaskTree, path: Sequence[Step], now: datetime) -> tuple[Task, WriteBatch]:
    task = tree.task
    model = deps.model if deps.settings.summary_model else None
    summary, source = write_summary(tree, path, model, max_tokens=deps.settings.summary_max_tokens)
    text = summary if source.startswith(EXTRACTIVE) else f"{task.goal}\n{summary}"
    text = text[: deps.max_text_chars]
    chain, held = _units(deps, tree)
    metadata = {"task_id": task.id, "task_type": task.task_type}
    if held is None:
        summary_unit = unit(SUMMARY_KIND, task.scope, text, metadata, now, max_chars=deps.max_text_chars)
        written = WriteBatch(inserts=[summary_unit], history=[added(summary_unit, now)])
    else:  # compressed before and restored since: the same unit, rewritten (and embedded again), active again
        summary_unit = held.model_copy(update={"text": text, "status": MemoryStatus.ACTIVE, "updated_at": now})
        event = history_event(summary_unit, HistoryAction.UPDATE, at=now, actor=ACTOR, old_text=held.text)
        written = replace(deps.vector_batch([summary_unit]), replacements=[(summary_unit, held.updated_at)],
                          history=[event])  # fmt: skip
    active = [item for item in chain if item.status == MemoryStatus.ACTIVE]
    archived = status_batch(active, MemoryStatus.ARCHIVED, HistoryAction.ARCHIVE, at=now, actor=ACTOR,
                            reason=f"task {task.id} compressed into its summary")  # fmt: skip
    compressed = task.model_copy(update={"compressed": True, "summary": summary, "summary_source": source,
                                         "summary_memory_id": summary_unit.id, "updated_at": now})  # fmt: skip
    return compressed, _merged(written, archived, WriteBatch(tasks=[compressed]))


def plan_restore(deps: ProcessDeps, tree: TaskTree, now: datetime) -> tuple[Task, WriteBatch]:
    task = tree.task
    chain, held = _units(deps, tree)
    reason = f"task {task.id} restored from its summary"
    back = [item for item in chain if item.status == MemoryStatus.ARCHIVED]
    restored = status_batch(back, MemoryStatus.ACTIVE, HistoryAction.RESTORE, at=now, actor=ACTOR, reason=reason)
    summary_off = [held] if held is not None and held.status == MemoryStatus.ACTIVE else []
    shelved = status_batch(summary_off, MemoryStatus.ARCHIVED, HistoryAction.ARCHIVE, at=now, actor=ACTOR,
                           reason=reason)  # fmt: skip
    expanded = task.model_copy(update={"compressed": False, "updated_at": now})
    return expanded, _merged(restored, shelved, WriteBatch(tasks=[expanded]))
