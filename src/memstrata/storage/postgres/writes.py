"""The PostgreSQL store's write path: one WriteBatch applied inside one transaction.

Functions over a connection that is already inside a transaction; the store owns the
connection, the transaction and the retry after a deadlock. Same semantics as the SQLite
store's ``writes.py``: optimistic locking on ``updated_at``, job completion guarded by
``expected_attempts``, keys kept in ``kv_facts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from memstrata.errors import ConflictError, EmbeddingMismatchError, InvalidInputError, NotFoundError
from memstrata.storage.postgres.graph import apply_graph
from memstrata.storage.postgres.migrations import ensure_vector_index
from memstrata.storage.postgres.rows import (
    HISTORY_COLUMNS,
    JOB_COLUMNS,
    history_params,
    job_params,
    memory_params,
    message_params,
    no_nul,
    scope_columns,
    scrubbed,
)
from memstrata.storage.postgres.where import scope_where
from memstrata.storage.protocol import ENDED, JobUpdate, StatusChange, Vector, WriteBatch
from memstrata.types import MemoryItem, MemoryStatus, Scope, utcnow

Conn = psycopg.Connection[Any]

_INSERT_MEMORY = (
    "INSERT INTO memories (id, tenant_id, user_id, agent_id, session_id, kind, text, key, metadata, confidence, "
    "status, event_time, created_at, updated_at, valid_from, valid_to, recorded_to, last_accessed_at, access_count, "
    "provenance, embedding_id, content_hash, tokens) VALUES (%(id)s, %(tenant_id)s, %(user_id)s, %(agent_id)s, "
    "%(session_id)s, %(kind)s, %(text)s, %(key)s, %(metadata)s, %(confidence)s, %(status)s, %(event_time)s, "
    "%(created_at)s, %(updated_at)s, %(valid_from)s, %(valid_to)s, %(recorded_to)s, %(last_accessed_at)s, "
    "%(access_count)s, %(provenance)s, %(embedding_id)s, %(content_hash)s, %(tokens)s::tsvector)"
)
_REPLACE_MEMORY = (
    "UPDATE memories SET kind = %(kind)s, text = %(text)s, key = %(key)s, metadata = %(metadata)s, "
    "confidence = %(confidence)s, status = %(status)s, event_time = %(event_time)s, updated_at = %(updated_at)s, "
    "valid_from = %(valid_from)s, valid_to = %(valid_to)s, recorded_to = %(recorded_to)s, provenance = %(provenance)s, "
    "content_hash = %(content_hash)s, tokens = %(tokens)s::tsvector "
    "WHERE id = %(id)s AND tenant_id = %(tenant_id)s AND user_id = %(user_id)s AND agent_id = %(agent_id)s "
    "AND session_id = %(session_id)s AND updated_at = %(expected_updated_at)s"
)
_UPSERT_KEY = (
    "INSERT INTO kv_facts (tenant_id, user_id, agent_id, session_id, key, memory_id) VALUES (%s, %s, %s, %s, %s, %s) "
    "ON CONFLICT (key, tenant_id, user_id, agent_id, session_id) DO UPDATE SET memory_id = EXCLUDED.memory_id"
)


def placeholders(columns: str) -> str:
    return ", ".join(["%s"] * len(columns.split(",")))


def cache_blob(vector: Vector) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def apply_batch(conn: Conn, batch: WriteBatch) -> None:
    if batch.vectors or batch.cache_entries or batch.entity_vectors:
        check_embedding_id(conn, batch.embedding_id)
    stored_at = utcnow()
    with conn.cursor() as cur:
        if batch.messages:
            cur.executemany(
                "INSERT INTO messages (id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp, "
                "stored_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [message_params(message, scope, stored_at) for message, scope in batch.messages],
            )
        if batch.inserts:
            cur.executemany(_INSERT_MEMORY, [memory_params(item) for item in batch.inserts])
            keyed = [_key_params(item) for item in batch.inserts if _has_live_key(item)]
            if keyed:
                cur.executemany(_UPSERT_KEY, keyed)
    for item, expected_updated_at in batch.replacements:
        _replace_memory(conn, item, expected_updated_at)
    for change in batch.status_changes:
        _change_status(conn, change)
    with conn.cursor() as cur:
        if batch.history:
            cur.executemany(
                f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES ({placeholders(HISTORY_COLUMNS)})",
                [history_params(event) for event in batch.history],
            )
        if batch.vectors:
            _put_vectors(cur, batch.vectors, str(batch.embedding_id))
        if batch.cache_entries:
            cur.executemany(
                "INSERT INTO embedding_cache (embedding_id, text_hash, vector) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                [(batch.embedding_id, digest, cache_blob(vector)) for digest, vector in batch.cache_entries],
            )
        if batch.jobs:
            cur.executemany(
                f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES ({placeholders(JOB_COLUMNS)})",
                [job_params(job) for job in batch.jobs],
            )
    apply_graph(conn, batch.entities, batch.entity_vectors, batch.relations, batch.embedding_id)
    for update in batch.job_updates:
        _update_job(conn, update)
    for scope in batch.release_waiting:
        conn.execute(
            "UPDATE jobs SET status = 'queued', updated_at = %s WHERE status = 'waiting' "
            "AND tenant_id = %s AND user_id = %s AND agent_id = %s AND session_id = %s",
            (stored_at, *scope_columns(scope)),
        )


def _has_live_key(item: MemoryItem) -> bool:
    return bool(item.key) and item.status == MemoryStatus.ACTIVE


def _key_params(item: MemoryItem) -> tuple[str, ...]:
    return (*scope_columns(item.scope), str(item.key), item.id)


def _update_job(conn: Conn, update: JobUpdate) -> None:
    guard, params = "", []
    if update.expected_attempts is not None:
        guard, params = " AND status = 'running' AND attempts = %s", [update.expected_attempts]
    cursor = conn.execute(
        "UPDATE jobs SET status = %s, error = %s, raw_output = %s, result = COALESCE(%s, result), updated_at = %s, "
        f"lease_until = NULL WHERE id = %s{guard}",
        (
            update.status.value,
            no_nul(update.error),
            no_nul(update.raw_output),
            None if update.result is None else Jsonb(scrubbed(update.result)),
            update.at,
            update.job_id,
            *params,
        ),
    )
    if cursor.rowcount != 1:
        raise ConflictError(
            f"job {update.job_id} was claimed again by another worker (its lease expired); "
            "its results were not applied twice"
        )


def _replace_memory(conn: Conn, item: MemoryItem, expected_updated_at: datetime) -> None:
    params = memory_params(item) | {"expected_updated_at": expected_updated_at}
    if conn.execute(_REPLACE_MEMORY, params).rowcount != 1:
        _raise_missing_or_changed(conn, item.id, item.scope)
    conn.execute("DELETE FROM kv_facts WHERE memory_id = %s", (item.id,))
    if _has_live_key(item):
        conn.execute(_UPSERT_KEY, _key_params(item))


def _change_status(conn: Conn, change: StatusChange) -> None:
    where = scope_where(change.scope, alias="memories")
    valid_to = (change.valid_to or change.at) if change.close_validity else None
    recorded_to = change.at if change.status in ENDED else None
    row = conn.execute(
        f"UPDATE memories SET status = %s, updated_at = %s, valid_to = %s, recorded_to = %s "
        f"WHERE id = %s AND {where.sql()} RETURNING key, tenant_id, user_id, agent_id, session_id",
        (change.status.value, change.at, valid_to, recorded_to, change.memory_id, *where.params),
    ).fetchone()
    if row is None:
        _raise_missing_or_changed(conn, change.memory_id, change.scope)
        return
    conn.execute("DELETE FROM kv_facts WHERE memory_id = %s", (change.memory_id,))
    key, tenant_id, user_id, agent_id, session_id = row
    if key and change.status == MemoryStatus.ACTIVE:
        conn.execute(_UPSERT_KEY, (tenant_id, user_id, agent_id, session_id, key, change.memory_id))


def _raise_missing_or_changed(conn: Conn, memory_id: str, scope: Scope) -> None:
    where = scope_where(scope, alias="memories")
    exists = conn.execute(
        f"SELECT 1 FROM memories WHERE id = %s AND {where.sql()}", (memory_id, *where.params)
    ).fetchone()
    if exists is None:
        raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}")
    raise ConflictError(f"memory {memory_id} was changed by another writer; read it again and retry")


def embedding_dims(embedding_id: str) -> int:
    try:
        return int(embedding_id.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise InvalidInputError(f"embedding id {embedding_id!r} must look like 'model:dims'") from None


def check_embedding_id(conn: Conn, embedding_id: str | None) -> None:
    """The first vectors fix the store's embedding model (and create its HNSW index)."""
    if embedding_id is None:
        raise ValueError("a batch with vectors must name their embedding_id")
    row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('embedding_id', %s) ON CONFLICT (key) DO NOTHING", (embedding_id,)
        )
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
        if row is not None and row[0] == embedding_id:
            ensure_vector_index(conn, embedding_dims(embedding_id))
    if row is None or row[0] != embedding_id:
        raise EmbeddingMismatchError(stored=str(row[0]) if row else "?", configured=embedding_id)


def _put_vectors(cur: psycopg.Cursor[Any], vectors: Sequence[tuple[str, Vector]], embedding_id: str) -> None:
    dims = embedding_dims(embedding_id)
    for memory_id, vector in vectors:
        if np.shape(vector) != (dims,):
            raise InvalidInputError(
                f"the vector for memory {memory_id} has shape {np.shape(vector)}, but {embedding_id} has {dims} dims"
            )
    cur.executemany(
        "INSERT INTO memory_vectors (memory_seq, embedding_id, embedding) SELECT seq, %s, %s FROM memories "
        "WHERE id = %s ON CONFLICT (memory_seq) DO UPDATE "
        "SET embedding_id = EXCLUDED.embedding_id, embedding = EXCLUDED.embedding",
        [(embedding_id, np.asarray(vector, dtype=np.float32), memory_id) for memory_id, vector in vectors],
    )
    ids = [memory_id for memory_id, _ in vectors]
    cur.execute("UPDATE memories SET embedding_id = %s WHERE id = ANY(%s)", (embedding_id, ids))
    if cur.rowcount != len(set(ids)):
        found = {row[0] for row in cur.execute("SELECT id FROM memories WHERE id = ANY(%s)", (ids,)).fetchall()}
        missing = sorted(set(ids) - found)
        raise NotFoundError(f"cannot store a vector for unknown memory {missing[0] if missing else '?'}")
