"""Whole-row upserts of scoped records (graph nodes and edges, process records), once for every backend.

A record is inserted, or replaces the stored row with the same id *in the same scope*: a row owned by
another scope is never touched, and the write fails with a ConflictError instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memstrata.errors import ConflictError
from memstrata.storage.sql import rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.rows import SCOPE_COLUMNS

# Columns a replacement keeps as first written.
_FIRST_WRITTEN = frozenset({"created_at", "started_at"})


def upsert_scoped(d: Dialect, tx: Tx, table: str, columns: str, params: Sequence[tuple[Any, ...]]) -> None:
    """``columns`` start with id and the four scope columns."""
    if not params:
        return
    names = rows.names(columns)
    updates = ", ".join(f"{name} = excluded.{name}" for name in names[5:] if name not in _FIRST_WRITTEN)
    same_scope = " AND ".join(f"{table}.{name} = excluded.{name}" for name in SCOPE_COLUMNS)
    sql = (
        f"INSERT INTO {table} ({columns}) VALUES ({rows.marks(len(names))}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE {same_scope}"
    )
    if tx.executemany(sql, params).rowcount != len(params):
        condition, values = d.in_("id", [row[0] for row in params])
        stored = {row[0]: tuple(row[1:]) for row in tx.execute(
            f"SELECT id, {', '.join(SCOPE_COLUMNS)} FROM {table} WHERE {condition}", values).fetchall()}  # fmt: skip
        foreign = next((str(row[0]) for row in params if stored.get(row[0]) != tuple(row[1:5])), "?")
        raise ConflictError(f"{table} id {foreign} belongs to another scope")
