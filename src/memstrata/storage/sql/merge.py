"""Merging rows that may already be stored (``WriteBatch.skip_identical``): importing an export into the
store it came from, or twice, skips what is already there instead of failing on the first id.

A row counts as already there when a stored row has its id and the same content. Counters that change
by use alone (access counts, a job's progress) are not content. A stored row with the same id and other
content is a real conflict: the batch fails with a ConflictError naming it, and nothing is written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memstrata.errors import ConflictError
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sql import knowledge, rows
from memstrata.storage.sql import process_rows as pr
from memstrata.storage.sql.dialect import Dialect, Tx

R = TypeVar("R")
_USE_COUNTERS = {"access_count", "last_accessed_at", "embedding_id"}
_JOB_PROGRESS = {"status", "attempts", "lease_until", "error", "raw_output", "result", "updated_at"}


def _same(record: Any) -> tuple[str, Any]:
    return record.id, record


def _without(volatile: set[str]) -> Callable[[Any], tuple[str, Any]]:
    return lambda record: (record.id, record.model_dump(exclude=volatile))


def _absent(
    d: Dialect,
    tx: Tx,
    table: str,
    columns: str,
    decode: Callable[[Dialect, Sequence[Any]], Any],
    records: Sequence[R],
    view: Callable[[R], tuple[str, Any]],  # (id, comparable content) of an incoming record
    stored_view: Callable[[Any], tuple[str, Any]],  # ... and of a decoded stored row
) -> list[R]:
    if not records:
        return []
    condition, params = d.in_("m.id", [view(record)[0] for record in records])
    found = tx.execute(f"SELECT {columns} FROM {table} m WHERE {condition}", params).fetchall()
    stored = dict(stored_view(decode(d, row)) for row in found)
    fresh = []
    for record in records:
        record_id, content = view(record)
        if record_id not in stored:
            fresh.append(record)
        elif stored[record_id] != content:
            raise ConflictError(
                f"{table} id {record_id} is already stored with other content; nothing was written. "
                "Import into another store, or remove that row first"
            )
    return fresh


def without_identical(d: Dialect, tx: Tx, batch: WriteBatch) -> WriteBatch:
    """``batch`` without the rows already stored as they are; ConflictError for a row stored otherwise."""
    return dataclasses.replace(
        batch,
        messages=_absent(d, tx, "messages", rows.MESSAGE_COLUMNS, rows.message, batch.messages,
                         lambda pair: (pair[0].id, pair), lambda turn: (turn.message.id, (turn.message, turn.scope))),
        inserts=_absent(d, tx, "memories", rows.MEMORY_COLUMNS, rows.memory, batch.inserts,
                        _without(_USE_COUNTERS), _without(_USE_COUNTERS)),
        history=_absent(d, tx, "history", rows.HISTORY_COLUMNS, rows.history, batch.history, _same, _same),
        jobs=_absent(d, tx, "jobs", rows.JOB_COLUMNS, rows.job, batch.jobs, _without(_JOB_PROGRESS),
                     _without(_JOB_PROGRESS)),
        entities=_absent(d, tx, "entities", rows.ENTITY_COLUMNS, rows.entity, batch.entities, _same, _same),
        relations=_absent(d, tx, "relations", rows.RELATION_COLUMNS, rows.relation, batch.relations, _same, _same),
        tasks=_absent(d, tx, "process_tasks", pr.TASK_COLUMNS, pr.task, batch.tasks, _same, _same),
        steps=_absent(d, tx, "process_steps", pr.STEP_COLUMNS, pr.step, batch.steps, _same, _same),
        hypotheses=_absent(d, tx, "process_hypotheses", pr.HYPOTHESIS_COLUMNS, pr.hypothesis, batch.hypotheses,
                           _same, _same),
        artifacts=_absent(d, tx, "process_artifacts", pr.ARTIFACT_COLUMNS, pr.artifact, batch.artifacts, _same, _same),
        strategies=_absent(d, tx, "process_strategies", pr.STRATEGY_COLUMNS, pr.strategy, batch.strategies, _same,
                           _same),
        sources=_absent(d, tx, "knowledge_sources", knowledge.SOURCE_COLUMNS, knowledge.source, batch.sources, _same,
                        _same),
        skip_identical=False,
    )  # fmt: skip
