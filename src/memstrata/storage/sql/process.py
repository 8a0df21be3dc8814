"""Process tables: writes inside a batch's transaction, and the scoped reads ``store.process`` answers,
including the two tree walks (useful paths and succeeded siblings) done in SQL. Once for every backend."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memstrata.records.process import UNIT_KINDS, Artifact, Hypothesis, Step, Strategy, Task, TaskQuery
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sql import process_rows, rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.process_rows import (
    ARTIFACT_COLUMNS,
    HYPOTHESIS_COLUMNS,
    STEP_COLUMNS,
    STRATEGY_COLUMNS,
    TASK_COLUMNS,
)
from memstrata.storage.sql.rows import MEMORY_COLUMNS, prefixed
from memstrata.storage.sql.upsert import upsert_scoped
from memstrata.storage.sql.where import Where, scope_where
from memstrata.types import AdminScope, MemoryItem, MemoryStatus, Scope

R = TypeVar("R")
_COUNTED = {"tasks": "process_tasks", "steps": "process_steps", "hypotheses": "process_hypotheses",
            "artifacts": "process_artifacts", "strategies": "process_strategies"}  # fmt: skip


def _none_asked(*selections: Sequence[str] | None) -> bool:
    """An empty list of ids (not None: "any") selects nothing, without a query."""
    return any(selection is not None and not selection for selection in selections)


def apply_process(d: Dialect, tx: Tx, batch: WriteBatch) -> None:
    """Process records of ``batch``, each inserted or replaced whole within its scope."""
    for table, columns, params in (
        ("process_tasks", TASK_COLUMNS, [process_rows.task_params(d, task) for task in batch.tasks]),
        ("process_steps", STEP_COLUMNS, [process_rows.step_params(d, step) for step in batch.steps]),
        ("process_hypotheses", HYPOTHESIS_COLUMNS,
         [process_rows.hypothesis_params(d, hypothesis) for hypothesis in batch.hypotheses]),
        ("process_artifacts", ARTIFACT_COLUMNS,
         [process_rows.artifact_params(d, artifact) for artifact in batch.artifacts]),
        ("process_strategies", STRATEGY_COLUMNS,
         [process_rows.strategy_params(d, strategy) for strategy in batch.strategies]),
    ):  # fmt: skip
        upsert_scoped(d, tx, table, columns, params)


class ProcessTables:
    """``store.process`` of the SQL store."""

    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect

    def _select(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self.d.read(lambda tx: tx.execute(sql, params).fetchall())

    def _where(self, scope: Scope, alias: str, **ids: Sequence[str] | None) -> Where:
        where = scope_where(self.d, scope, alias, by_key=any(values is not None for values in ids.values()))
        for column, values in ids.items():
            if values is not None:
                where.add_sql(self.d.in_(f"{alias}.{column}", list(values)))
        return where

    def tasks(self, query: TaskQuery) -> list[Task]:
        where = self._where(query.scope, "t", id=query.ids)
        if query.id_prefix is not None:
            where.add("substr(t.id, 1, ?) = ?", len(query.id_prefix), query.id_prefix)
        if query.statuses:
            where.add_sql(self.d.in_("t.status", [status.value for status in query.statuses]))
        if query.task_types:
            where.add_sql(self.d.in_("t.task_type", list(query.task_types)))
        direction = "DESC" if query.newest_first else "ASC"
        found = self._select(
            f"SELECT {prefixed(TASK_COLUMNS, 't')} FROM process_tasks t WHERE {where.sql()} "
            f"ORDER BY t.seq {direction} LIMIT ? OFFSET ?",
            (*where.params, query.limit, query.offset),
        )
        return [process_rows.task(self.d, row) for row in found]

    def steps(
        self, scope: Scope, *, task_ids: Sequence[str] | None = None, step_ids: Sequence[str] | None = None
    ) -> list[Step]:
        if _none_asked(task_ids, step_ids):
            return []
        where = self._where(scope, "s", task_id=task_ids, id=step_ids)
        found = self._select(
            f"SELECT {prefixed(STEP_COLUMNS, 's')} FROM process_steps s WHERE {where.sql()} ORDER BY s.seq",
            where.params,
        )
        return [process_rows.step(self.d, row) for row in found]

    def hypotheses(
        self, scope: Scope, *, task_ids: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hypothesis]:
        return self._records(scope, "process_hypotheses", HYPOTHESIS_COLUMNS, process_rows.hypothesis, task_ids, ids)

    def artifacts(
        self, scope: Scope, *, task_ids: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Artifact]:
        return self._records(scope, "process_artifacts", ARTIFACT_COLUMNS, process_rows.artifact, task_ids, ids)

    def _records(self, scope: Scope, table: str, columns: str, decode: Callable[[Dialect, Sequence[Any]], R],
                 task_ids: Sequence[str] | None, ids: Sequence[str] | None) -> list[R]:  # fmt: skip
        if _none_asked(task_ids, ids):
            return []
        where = self._where(scope, "r", task_id=task_ids, id=ids)
        found = self._select(
            f"SELECT {prefixed(columns, 'r')} FROM {table} r WHERE {where.sql()} ORDER BY r.seq", where.params
        )
        return [decode(self.d, row) for row in found]

    def strategies(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        task_types: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[Strategy]:
        if _none_asked(ids, task_types):
            return []
        where = self._where(scope, "g", id=ids, task_type=task_types)
        found = self._select(
            f"SELECT {prefixed(STRATEGY_COLUMNS, 'g')} FROM process_strategies g WHERE {where.sql()} "
            "ORDER BY g.confidence DESC, g.support DESC, g.seq LIMIT ?",
            (*where.params, limit),
        )
        return [process_rows.strategy(self.d, row) for row in found]

    def useful_paths(self, scope: Scope, task_ids: Sequence[str]) -> dict[str, list[Step]]:
        if not task_ids:
            return {}
        top = self._where(scope, "s", task_id=task_ids)
        below = scope_where(self.d, scope, "c", by_key=True)
        worked = "status = 'succeeded' AND {0}.dead_end = ?"
        sql = (
            "WITH RECURSIVE path (id) AS ("
            f"SELECT s.id FROM process_steps s WHERE {top.sql()} AND s.parent_id = '' AND s.{worked.format('s')} "
            "UNION ALL "
            f"SELECT c.id FROM process_steps c JOIN path p ON c.parent_id = p.id WHERE {below.sql()} "
            f"AND c.{worked.format('c')}) "
            f"SELECT {prefixed(STEP_COLUMNS, 's')} FROM process_steps s WHERE s.id IN (SELECT id FROM path) "
            "ORDER BY s.seq"
        )
        paths: dict[str, list[Step]] = {}
        for row in self._select(sql, (*top.params, False, *below.params, False)):
            found = process_rows.step(self.d, row)
            paths.setdefault(found.task_id, []).append(found)
        return paths

    def succeeded_siblings(self, scope: Scope, step_ids: Sequence[str]) -> list[tuple[str, Step]]:
        if not step_ids:
            return []
        mine = self._where(scope, "s", id=step_ids)
        theirs = scope_where(self.d, scope, "sib", by_key=True)
        found = self._select(
            f"SELECT s.id, {prefixed(STEP_COLUMNS, 'sib')} FROM process_steps s JOIN process_steps sib "
            "ON sib.task_id = s.task_id AND sib.parent_id = s.parent_id AND sib.id <> s.id "
            f"WHERE {mine.sql()} AND {theirs.sql()} AND sib.status = 'succeeded' AND sib.dead_end = ? "
            "ORDER BY sib.seq",
            (*mine.params, *theirs.params, False),
        )
        return [(row[0], process_rows.step(self.d, tuple(row)[1:])) for row in found]

    def unindexed(self, scope: Scope, embedding_id: str, limit: int) -> list[MemoryItem]:
        where = scope_where(self.d, scope, "m")
        where.add_sql(self.d.in_("m.kind", list(UNIT_KINDS)))
        where.add_sql(self.d.in_("m.status", [MemoryStatus.ACTIVE.value, MemoryStatus.ARCHIVED.value]))
        found = self._select(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()} AND NOT EXISTS (SELECT 1 FROM "
            "memory_vectors v WHERE v.memory_seq = m.seq AND v.embedding_id = ?) ORDER BY m.seq LIMIT ?",
            (*where.params, embedding_id, limit),
        )
        return [rows.memory(self.d, row) for row in found]

    def counts(self, scope: AdminScope | None) -> dict[str, int]:
        where = scope_where(self.d, scope, "t")
        selects = ", ".join(f"(SELECT COUNT(*) FROM {table} t WHERE {where.sql()})" for table in _COUNTED.values())
        found = self._select(f"SELECT {selects}", where.params * len(_COUNTED))[0]
        return {name: int(count) for name, count in zip(_COUNTED, found, strict=True)}
