"""The SQLite store's write path: one WriteBatch applied inside one transaction.

Functions over an open connection; the store owns the connection and the transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memstrata.errors import ConflictError, EmbeddingMismatchError, NotFoundError
from memstrata.indexing import content_hash, index_text
from memstrata.lexical import index_document
from memstrata.storage.protocol import ENDED, JobUpdate, StatusChange, Vector, WriteBatch
from memstrata.storage.sqlite.graph import apply_graph
from memstrata.storage.sqlite.rows import (
    HISTORY_COLUMNS,
    JOB_COLUMNS,
    MEMORY_COLUMNS,
    history_to_row,
    job_to_row,
    memory_to_row,
    message_to_row,
    row_to_memory,
    scope_columns,
    ts,
)
from memstrata.storage.sqlite.where import scope_where
from memstrata.types import MemoryItem, MemoryStatus, Scope, utcnow

_INSERT_MEMORY = (
    "INSERT INTO memories (id, tenant_id, user_id, agent_id, session_id, kind, text, key, metadata, confidence, "
    "status, event_time, created_at, updated_at, valid_from, valid_to, recorded_to, last_accessed_at, access_count, "
    "provenance, embedding_id, content_hash, rev) VALUES (:id, :tenant_id, :user_id, :agent_id, :session_id, :kind, "
    ":text, :key, :metadata, :confidence, :status, :event_time, :created_at, :updated_at, :valid_from, :valid_to, "
    ":recorded_to, :last_accessed_at, :access_count, :provenance, :embedding_id, :content_hash, :rev)"
)
_REPLACE_MEMORY = (
    "UPDATE memories SET kind = :kind, text = :text, key = :key, metadata = :metadata, confidence = :confidence, "
    "status = :status, event_time = :event_time, updated_at = :updated_at, valid_from = :valid_from, "
    "valid_to = :valid_to, recorded_to = :recorded_to, provenance = :provenance, content_hash = :content_hash, "
    "rev = :rev "
    "WHERE id = :id AND tenant_id = :tenant_id AND user_id = :user_id AND agent_id = :agent_id "
    "AND session_id = :session_id AND updated_at = :expected_updated_at"
)


def bump(conn: sqlite3.Connection, key: str) -> int:
    """Increment a counter in ``meta``; writes bump ``rev`` so every process's vector index can catch up."""
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ? RETURNING value", (key,)
    ).fetchone()
    return int(row[0])


def placeholders(columns: str) -> str:
    return ", ".join("?" * len(columns.split(",")))


def blob(vector: Vector) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def apply_batch(conn: sqlite3.Connection, batch: WriteBatch) -> None:
    rev = bump(conn, "rev")
    if batch.vectors or batch.cache_entries or batch.entity_vectors:
        _check_embedding_id(conn, batch.embedding_id)
    stored_at = utcnow()
    conn.executemany(
        "INSERT INTO messages (id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp, "
        "stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [message_to_row(message, scope, stored_at) for message, scope in batch.messages],
    )
    for item in batch.inserts:
        _insert_memory(conn, item, rev)
    for item, expected_updated_at in batch.replacements:
        _replace_memory(conn, item, expected_updated_at, rev)
    for change in batch.status_changes:
        _change_status(conn, change, rev)
    conn.executemany(
        f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES ({placeholders(HISTORY_COLUMNS)})",
        [history_to_row(event) for event in batch.history],
    )
    if batch.vectors:
        _put_vectors(conn, batch.vectors, str(batch.embedding_id), rev)
    if batch.cache_entries:
        conn.executemany(
            "INSERT OR IGNORE INTO embedding_cache (embedding_id, text_hash, vector) VALUES (?, ?, ?)",
            [(batch.embedding_id, digest, blob(vector)) for digest, vector in batch.cache_entries],
        )
    conn.executemany(
        f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({placeholders(JOB_COLUMNS)})",
        [job_to_row(job) for job in batch.jobs],
    )
    apply_graph(conn, batch.entities, batch.entity_vectors, batch.relations, batch.embedding_id)
    for update in batch.job_updates:
        _update_job(conn, update)
    for scope in batch.release_waiting:
        conn.execute(
            "UPDATE jobs SET status = 'queued', updated_at = ? WHERE status = 'waiting' "
            "AND tenant_id = ? AND user_id = ? AND agent_id = ? AND session_id = ?",
            (ts(stored_at), *scope_columns(scope)),
        )


def _update_job(conn: sqlite3.Connection, update: JobUpdate) -> None:
    guard, params = "", []
    if update.expected_attempts is not None:
        guard, params = " AND status = 'running' AND attempts = ?", [update.expected_attempts]
    cursor = conn.execute(
        "UPDATE jobs SET status = ?, error = ?, raw_output = ?, result = COALESCE(?, result), updated_at = ?, "
        f"lease_until = NULL WHERE id = ?{guard}",
        (
            update.status.value,
            update.error,
            update.raw_output,
            None if update.result is None else json.dumps(update.result, ensure_ascii=False),
            ts(update.at),
            update.job_id,
            *params,
        ),
    )
    if cursor.rowcount != 1:
        raise ConflictError(
            f"job {update.job_id} was claimed again by another worker (its lease expired); "
            "its results were not applied twice"
        )


def _insert_memory(conn: sqlite3.Connection, item: MemoryItem, rev: int) -> None:
    row = memory_to_row(item, content_hash(item.text)) | {"rev": rev}
    try:
        seq = conn.execute(_INSERT_MEMORY, row).lastrowid
    except sqlite3.IntegrityError:
        raise ConflictError(f"a memory with id {item.id} already exists") from None
    conn.execute("INSERT INTO memory_fts (rowid, tokens) VALUES (?, ?)", (seq, index_document(index_text(item))))
    _sync_key(conn, item)


def _replace_memory(conn: sqlite3.Connection, item: MemoryItem, expected_updated_at: datetime, rev: int) -> None:
    row = memory_to_row(item, content_hash(item.text)) | {
        "rev": rev,
        "expected_updated_at": ts(expected_updated_at),
    }
    if conn.execute(_REPLACE_MEMORY, row).rowcount != 1:
        _raise_missing_or_changed(conn, item.id, item.scope)
    seq = conn.execute("SELECT seq FROM memories WHERE id = ?", (item.id,)).fetchone()[0]
    conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (seq,))
    conn.execute("INSERT INTO memory_fts (rowid, tokens) VALUES (?, ?)", (seq, index_document(index_text(item))))
    conn.execute("DELETE FROM kv_facts WHERE memory_id = ?", (item.id,))
    _sync_key(conn, item)


def _sync_key(conn: sqlite3.Connection, item: MemoryItem) -> None:
    if item.key and item.status == MemoryStatus.ACTIVE:
        conn.execute(
            "INSERT OR REPLACE INTO kv_facts (tenant_id, user_id, agent_id, session_id, key, memory_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (*scope_columns(item.scope), item.key, item.id),
        )


def _change_status(conn: sqlite3.Connection, change: StatusChange, rev: int) -> None:
    where = scope_where(change.scope, alias="memories")
    valid_to = ts(change.valid_to or change.at) if change.close_validity else None
    recorded_to = ts(change.at) if change.status in ENDED else None
    cursor = conn.execute(
        f"UPDATE memories SET status = ?, updated_at = ?, valid_to = ?, recorded_to = ?, rev = ? "
        f"WHERE id = ? AND {where.sql()}",
        (change.status.value, ts(change.at), valid_to, recorded_to, rev, change.memory_id, *where.params),
    )
    if cursor.rowcount != 1:
        _raise_missing_or_changed(conn, change.memory_id, change.scope)
    conn.execute("DELETE FROM kv_facts WHERE memory_id = ?", (change.memory_id,))
    if change.status == MemoryStatus.ACTIVE:
        row = conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?", (change.memory_id,)).fetchone()
        _sync_key(conn, row_to_memory(row))


def _raise_missing_or_changed(conn: sqlite3.Connection, memory_id: str, scope: Scope) -> None:
    where = scope_where(scope, alias="memories")
    exists = conn.execute(
        f"SELECT 1 FROM memories WHERE id = ? AND {where.sql()}", (memory_id, *where.params)
    ).fetchone()
    if exists is None:
        raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}")
    raise ConflictError(f"memory {memory_id} was changed by another writer; read it again and retry")


def _check_embedding_id(conn: sqlite3.Connection, embedding_id: str | None) -> None:
    if embedding_id is None:
        raise ValueError("a batch with vectors must name their embedding_id")
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
    if row is None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('embedding_id', ?)", (embedding_id,))
    elif row[0] != embedding_id:
        raise EmbeddingMismatchError(stored=row[0], configured=embedding_id)


def _put_vectors(conn: sqlite3.Connection, vectors: Sequence[tuple[str, Vector]], embedding_id: str, rev: int) -> None:
    for memory_id, vector in vectors:
        cursor = conn.execute(
            "INSERT OR REPLACE INTO memory_vectors (memory_seq, embedding_id, vector) "
            "SELECT seq, ?, ? FROM memories WHERE id = ?",
            (embedding_id, blob(vector), memory_id),
        )
        if cursor.rowcount != 1:
            raise NotFoundError(f"cannot store a vector for unknown memory {memory_id}")
    conn.executemany(
        "UPDATE memories SET embedding_id = ?, rev = ? WHERE id = ?",
        [(embedding_id, rev, memory_id) for memory_id, _ in vectors],
    )
