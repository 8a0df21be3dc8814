"""Erasing everything about a scope, and counting what is left (the proof an erase is complete)."""

from __future__ import annotations

from typing import Any

import psycopg

from memstrata.indexing import index_text, text_hash
from memstrata.storage.postgres.rows import MEMORY_COLUMNS, row_to_memory
from memstrata.storage.postgres.where import scope_where
from memstrata.types import Scope

# Tables holding scope columns directly; memory_vectors hangs off memories.seq, and the keyword
# tokens live in the memories row itself, so they go with it.
_SCOPED_TABLES = ("messages", "history", "jobs", "kv_facts", "entities", "relations")


def erase_scope_rows(conn: psycopg.Connection[Any], scope: Scope) -> dict[str, int]:
    """Inside the caller's transaction: delete every row about ``scope``; rows deleted per table."""
    where = scope_where(scope, alias="m")
    rows = conn.execute(
        f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()} FOR UPDATE", where.params
    ).fetchall()
    seqs = [row[0] for row in rows]
    # Cached embeddings are keyed by text hash only; the user's texts must not survive there either.
    digests = sorted({text_hash(index_text(row_to_memory(tuple(row)[1:]))) for row in rows})
    deleted: dict[str, int] = {}
    deleted["memory_vectors"] = conn.execute("DELETE FROM memory_vectors WHERE memory_seq = ANY(%s)", (seqs,)).rowcount
    deleted["embedding_cache"] = conn.execute(
        "DELETE FROM embedding_cache WHERE text_hash = ANY(%s)", (digests,)
    ).rowcount
    deleted["memories"] = conn.execute("DELETE FROM memories WHERE seq = ANY(%s)", (seqs,)).rowcount
    for table in _SCOPED_TABLES:
        table_where = scope_where(scope, alias=table)
        deleted[table] = conn.execute(f"DELETE FROM {table} WHERE {table_where.sql()}", table_where.params).rowcount
    return deleted


def count_scope_rows(conn: psycopg.Connection[Any], scope: Scope) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in ("memories", *_SCOPED_TABLES):
        where = scope_where(scope, alias="t")
        row = conn.execute(f"SELECT COUNT(*) FROM {table} t WHERE {where.sql()}", where.params).fetchone()
        counts[table] = int(row[0]) if row else 0
    where = scope_where(scope, alias="m")
    row = conn.execute(
        f"SELECT COUNT(*) FROM memory_vectors x JOIN memories m ON m.seq = x.memory_seq WHERE {where.sql()}",
        where.params,
    ).fetchone()
    counts["memory_vectors"] = int(row[0]) if row else 0
    return counts
