"""Erasing everything about a scope, and counting what is left (the proof an erase is complete)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memstrata.indexing import index_text, text_hash
from memstrata.storage.sqlite.rows import MEMORY_COLUMNS, row_to_memory
from memstrata.storage.sqlite.where import scope_where
from memstrata.types import Scope

# Tables holding scope columns directly; memory_vectors and memory_fts hang off memories.seq.
_SCOPED_TABLES = ("messages", "history", "jobs", "kv_facts", "entities", "relations")


def erase_scope_rows(conn: sqlite3.Connection, scope: Scope) -> dict[str, int]:
    where = scope_where(scope, alias="m")
    rows = conn.execute(f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()}", where.params).fetchall()
    seqs = [row[0] for row in rows]
    # Cached embeddings are keyed by text hash only; the user's texts must not survive there either.
    digests = sorted({text_hash(index_text(row_to_memory(tuple(row)[1:]))) for row in rows})
    deleted: dict[str, int] = {}
    deleted["memory_fts"] = _delete_in(conn, "memory_fts", "rowid", seqs)
    deleted["memory_vectors"] = _delete_in(conn, "memory_vectors", "memory_seq", seqs)
    deleted["embedding_cache"] = _delete_in(conn, "embedding_cache", "text_hash", digests)
    deleted["memories"] = _delete_in(conn, "memories", "seq", seqs)
    for table in _SCOPED_TABLES:
        table_where = scope_where(scope, alias=table)
        deleted[table] = conn.execute(f"DELETE FROM {table} WHERE {table_where.sql()}", table_where.params).rowcount
    return deleted


def _delete_in(conn: sqlite3.Connection, table: str, column: str, values: Sequence[object]) -> int:
    count = 0
    for start in range(0, len(values), 500):
        part = values[start : start + 500]
        marks = ",".join("?" * len(part))
        count += conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", part).rowcount
    return count


def count_scope_rows(conn: sqlite3.Connection, scope: Scope) -> dict[str, int]:
    counts = {}
    for table in ("memories", *_SCOPED_TABLES):
        where = scope_where(scope, alias="t")
        counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table} t WHERE {where.sql()}", where.params).fetchone()[0]
    where = scope_where(scope, alias="m")
    for table, column in (("memory_vectors", "memory_seq"), ("memory_fts", "rowid")):
        counts[table] = conn.execute(
            f"SELECT COUNT(*) FROM {table} x JOIN memories m ON m.seq = x.{column} WHERE {where.sql()}", where.params
        ).fetchone()[0]
    return counts
