"""The write path: one WriteBatch applied inside the caller's transaction, the same on every backend.

Optimistic locking on ``updated_at``, job completion guarded by ``expected_attempts``, keys kept in
``kv_facts``; the dialect adds what its indexes need (keyword entries, change counters).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np

from memstrata.errors import (
    ConcurrentWriteError,
    ConflictError,
    EmbeddingMismatchError,
    InvalidInputError,
    NotFoundError,
)
from memstrata.indexing import content_hash
from memstrata.storage.protocol import ENDED, JobUpdate, StatusChange, Vector, WriteBatch
from memstrata.storage.sql import rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.graph import apply_graph, vector_bytes
from memstrata.storage.sql.knowledge import apply_sources
from memstrata.storage.sql.merge import without_identical
from memstrata.storage.sql.process import apply_process
from memstrata.storage.sql.rows import HISTORY_COLUMNS, JOB_COLUMNS, MEMORY_WRITE_COLUMNS, MESSAGE_WRITE_COLUMNS
from memstrata.storage.sql.where import scope_where
from memstrata.types import MemoryItem, MemoryStatus, Scope, utcnow

_REPLACED = ("kind", "text", "key", "metadata", "confidence", "status", "event_time", "created_at", "updated_at",
             "valid_from", "valid_to", "recorded_to", "provenance", "words", "content_hash")  # fmt: skip
_UPSERT_KEY = (
    "INSERT INTO kv_facts (tenant_id, user_id, agent_id, session_id, key, memory_id) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (key, tenant_id, user_id, agent_id, session_id) DO UPDATE SET memory_id = excluded.memory_id"
)


def embedding_dims(embedding_id: str) -> int:
    try:
        return int(embedding_id.rsplit(":", 1)[1])
    except (IndexError, ValueError):
        raise InvalidInputError(f"embedding id {embedding_id!r} must look like 'model:dims'") from None


def apply_batch(d: Dialect, tx: Tx, batch: WriteBatch) -> None:
    d.begin_batch(tx)
    if batch.skip_identical:
        batch = without_identical(d, tx, batch)
    if batch.vectors or batch.cache_entries or batch.entity_vectors:
        check_embedding_id(d, tx, batch.embedding_id)
    stored_at = utcnow()
    _insert(tx, "messages", MESSAGE_WRITE_COLUMNS,
            [rows.message_params(d, message, scope, batch.message_stored_at.get(str(message.id), stored_at))
             for message, scope in batch.messages])  # fmt: skip
    if batch.distinct_texts:
        distinct = set(batch.distinct_texts)  # once: a set per insert made a bulk add quadratic
        _check_distinct(d, tx, [item for item in batch.inserts if item.id in distinct])
    if batch.inserts:
        columns = ", ".join([*MEMORY_WRITE_COLUMNS, *(column for column, _ in d.memory_extras)])
        values = ", ".join(["?"] * len(MEMORY_WRITE_COLUMNS) + [expression for _, expression in d.memory_extras])
        tx.executemany(
            f"INSERT INTO memories ({columns}) VALUES ({values})",
            [(*rows.memory_params(d, item), *d.memory_extra_params(item)) for item in batch.inserts],
        )
        d.index_memories(tx, batch.inserts)
        _claim_keys(tx, batch.inserts, _changed_ids(batch))
    for item, expected_updated_at in batch.replacements:
        _replace_memory(d, tx, item, expected_updated_at)
    for change in batch.status_changes:
        _change_status(d, tx, change)
    for scope, message_id in batch.forgotten_messages:
        where = scope_where(d, scope, "messages")
        tx.execute(f"DELETE FROM messages WHERE id = ? AND {where.sql()}", (message_id, *where.params))
    _insert(tx, "history", HISTORY_COLUMNS, [rows.history_params(d, event) for event in batch.history])
    held = held_by_memories(batch)
    if batch.vectors:
        _put_vectors(d, tx, batch.vectors, str(batch.embedding_id), held)
    cache_entries = [(digest, vector) for digest, vector in batch.cache_entries if digest not in held.values()]
    if cache_entries:
        tx.executemany(
            "INSERT INTO embedding_cache (embedding_id, text_hash, vector) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [(batch.embedding_id, digest, vector_bytes(vector)) for digest, vector in cache_entries],
        )
    _insert(tx, "jobs", JOB_COLUMNS, [rows.job_params(d, job) for job in batch.jobs])
    apply_graph(d, tx, batch.entities, batch.entity_vectors, batch.relations, batch.embedding_id)
    apply_process(d, tx, batch)
    apply_sources(d, tx, batch)
    for update in batch.job_updates:
        _update_job(d, tx, update)
    for scope in batch.release_waiting:
        tx.execute(
            "UPDATE jobs SET status = 'queued', updated_at = ? WHERE status = 'waiting' "
            "AND tenant_id = ? AND user_id = ? AND agent_id = ? AND session_id = ?",
            (d.ts(stored_at), *rows.scope_columns(scope)),
        )


def _insert(tx: Tx, table: str, columns: str, params: Sequence[Sequence[object]]) -> None:
    if params:
        tx.executemany(f"INSERT INTO {table} ({columns}) VALUES ({rows.marks(len(rows.names(columns)))})", params)


_CLAIM_KEY = (
    "INSERT INTO kv_facts (tenant_id, user_id, agent_id, session_id, key, memory_id) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (key, tenant_id, user_id, agent_id, session_id) DO NOTHING"
)


def _changed_ids(batch: WriteBatch) -> set[str]:
    return {item.id for item, _ in batch.replacements} | {change.memory_id for change in batch.status_changes}


def _claim_keys(tx: Tx, items: Sequence[MemoryItem], changed: set[str]) -> None:
    """A new memory takes its key's slot in its exact scope only from a value this batch replaces or ends: a
    slot another writer filled after this batch was planned is a ConcurrentWriteError, never two current
    values of one key (PostgreSQL's DO NOTHING waits for that writer's commit, so the race is closed there too)."""
    for item in items:
        if not item.key or item.status != MemoryStatus.ACTIVE:
            continue
        slot = (*rows.scope_columns(item.scope), item.key)
        if tx.execute(_CLAIM_KEY, (*slot, item.id)).rowcount == 1:
            continue
        held = tx.execute("SELECT memory_id FROM kv_facts WHERE tenant_id = ? AND user_id = ? AND agent_id = ? "
                          "AND session_id = ? AND key = ?", slot).fetchone()  # fmt: skip
        if held is not None and held[0] not in changed:
            raise ConcurrentWriteError(  # add() plans again on it; an import of a clashing key stops here
                f"key {item.key} in scope {item.scope.label()} already holds another current value (memory "
                f"{held[0]}): a key holds one value per scope; update or delete that memory first, or retry if "
                "another writer has just set it; nothing was written"
            )
        tx.execute("UPDATE kv_facts SET memory_id = ? WHERE tenant_id = ? AND user_id = ? AND agent_id = ? "
                   "AND session_id = ? AND key = ?", (item.id, *slot))  # fmt: skip


def _check_distinct(d: Dialect, tx: Tx, items: Sequence[MemoryItem]) -> None:
    """Each item's text is still new to its exact scope and kind (as ``add()`` planned): a text another writer
    stored meanwhile is a ConcurrentWriteError. PostgreSQL's readers do not see an uncommitted insert, so writers
    of new texts queue on the claims lock there; SQLite's BEGIN IMMEDIATE already admits one writer."""
    if not items:
        return
    d.lock_claims(tx)
    for item in items:
        where = scope_where(d, item.scope, by_key=True, exact=True)  # on the hash index: see Store.find_by_hash
        held = tx.execute(
            f"SELECT m.id FROM memories m WHERE m.content_hash = ? AND m.kind = ? AND m.status = ? AND {where.sql()} "
            "LIMIT 1",
            (content_hash(item.text), item.kind, MemoryStatus.ACTIVE.value, *where.params),
        ).fetchone()
        if held is not None:
            raise ConcurrentWriteError(f"memory {held[0]} holds the same text in scope {item.scope.label()}; "
                                       "another writer stored it first, nothing was written")  # fmt: skip


def _insert_keys(tx: Tx, items: Sequence[MemoryItem]) -> None:
    keyed = [item for item in items if item.key and item.status == MemoryStatus.ACTIVE]
    if keyed:
        tx.executemany(_UPSERT_KEY, [(*rows.scope_columns(item.scope), item.key, item.id) for item in keyed])


def _replace_memory(d: Dialect, tx: Tx, item: MemoryItem, expected_updated_at: datetime) -> None:
    values = dict(zip(MEMORY_WRITE_COLUMNS, rows.memory_params(d, item), strict=True))
    sets = ", ".join([f"{column} = ?" for column in _REPLACED] + [f"{c} = {e}" for c, e in d.memory_extras])
    cursor = tx.execute(
        f"UPDATE memories SET {sets} WHERE id = ? AND tenant_id = ? AND user_id = ? AND agent_id = ? "
        "AND session_id = ? AND updated_at = ?",
        (*(values[column] for column in _REPLACED), *d.memory_extra_params(item), item.id,
         *rows.scope_columns(item.scope), d.ts(expected_updated_at)),
    )  # fmt: skip
    if cursor.rowcount != 1:
        _raise_missing_or_changed(d, tx, item.id, item.scope)
    d.index_memories(tx, [item])
    tx.execute("DELETE FROM kv_facts WHERE memory_id = ?", (item.id,))
    _insert_keys(tx, [item])


def _change_status(d: Dialect, tx: Tx, change: StatusChange) -> None:
    where = scope_where(d, change.scope, "memories")
    valid_to = d.ts(change.valid_to or change.at) if change.close_validity else None
    recorded_to = d.ts(change.recorded_to or change.at) if change.status in ENDED else None
    # Closing keeps an earlier end: an older value of a key, replaced in 2024 and deleted today, stopped being true
    # in 2024 (set to today, it held again beside its successor for time travel: two values of one key).
    found = tx.execute(
        f"UPDATE memories SET status = ?, updated_at = ?, "
        f"valid_to = CASE WHEN ? AND valid_to IS NOT NULL AND valid_to < ? THEN valid_to ELSE ? END, "
        f"recorded_to = ?{d.touch} WHERE id = ? AND {where.sql()} "
        "RETURNING key, tenant_id, user_id, agent_id, session_id",
        (change.status.value, d.ts(change.at), change.close_validity, valid_to, valid_to, recorded_to,
         change.memory_id, *where.params),
    ).fetchall()  # fmt: skip
    if not found:
        _raise_missing_or_changed(d, tx, change.memory_id, change.scope)
    tx.execute("DELETE FROM kv_facts WHERE memory_id = ?", (change.memory_id,))
    key, *scope = found[0]
    if key and change.status == MemoryStatus.ACTIVE:
        tx.execute(_UPSERT_KEY, (*scope, key, change.memory_id))


def _raise_missing_or_changed(d: Dialect, tx: Tx, memory_id: str, scope: Scope) -> None:
    where = scope_where(d, scope, "memories")
    exists = tx.execute(f"SELECT 1 FROM memories WHERE id = ? AND {where.sql()}", (memory_id, *where.params))
    if exists.fetchone() is None:
        raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}")
    raise ConcurrentWriteError(f"memory {memory_id} was changed by another writer; read it again and retry")


def _update_job(d: Dialect, tx: Tx, update: JobUpdate) -> None:
    guard, params = "", []
    if update.expected_attempts is not None:
        guard, params = " AND status = 'running' AND attempts = ?", [update.expected_attempts]
    cursor = tx.execute(
        "UPDATE jobs SET status = ?, error = ?, raw_output = ?, result = COALESCE(?, result), updated_at = ?, "
        f"lease_until = NULL WHERE id = ?{guard}",
        (update.status.value, d.model_text(update.error), d.model_text(update.raw_output),
         None if update.result is None else d.model_json(update.result), d.ts(update.at), update.job_id, *params),
    )  # fmt: skip
    if cursor.rowcount != 1:
        raise ConflictError(
            f"job {update.job_id} was claimed again by another worker (its lease expired); "
            "its results were not applied twice"
        )


def check_embedding_id(d: Dialect, tx: Tx, embedding_id: str | None) -> None:
    """The first vectors fix the store's embedding model; later ones must be of the same model."""
    if embedding_id is None:
        raise ValueError("a batch with vectors must name their embedding_id")
    embedding_dims(embedding_id)
    inserted = tx.execute(
        "INSERT INTO meta (key, value) VALUES ('embedding_id', ?) ON CONFLICT (key) DO NOTHING", (embedding_id,)
    ).rowcount
    if inserted:
        d.on_embedding_id(tx, embedding_id)
        return
    stored = tx.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
    if stored is None or stored[0] != embedding_id:
        raise EmbeddingMismatchError(stored=str(stored[0]) if stored else "?", configured=embedding_id)


def held_by_memories(batch: WriteBatch) -> dict[str, str]:
    """memory id -> text hash, for the batch's new cache entries whose vector a memory of the batch stores: that
    row is their cache entry too (found by text_hash), so the vector is stored once. Matched on the vector's
    bytes, which is exact: the cache entry says "this text embeds to these bytes", and so does the row."""
    if not (batch.vectors and batch.cache_entries):
        return {}
    digests = {vector_bytes(vector): digest for digest, vector in batch.cache_entries}
    held = {}
    for memory_id, vector in batch.vectors:
        digest = digests.get(vector_bytes(vector))
        if digest is not None:
            held[memory_id] = digest
    return held


def _put_vectors(
    d: Dialect, tx: Tx, vectors: Sequence[tuple[str, Vector]], embedding_id: str, held: dict[str, str]
) -> None:
    dims = embedding_dims(embedding_id)
    for memory_id, vector in vectors:
        if np.shape(vector) != (dims,):
            raise InvalidInputError(
                f"the vector for memory {memory_id} has shape {np.shape(vector)}, but {embedding_id} has {dims} dims"
            )
    upsert_vectors(d, tx, [(embedding_id, vector, memory_id, held.get(memory_id)) for memory_id, vector in vectors])
    ids = [memory_id for memory_id, _ in vectors]
    updated = tx.executemany(f"UPDATE memories SET embedding_id = ?{d.touch} WHERE id = ?",
                             [(embedding_id, memory_id) for memory_id in ids]).rowcount  # fmt: skip
    if updated != len(ids):
        condition, params = d.in_("id", ids)
        found = {row[0] for row in tx.execute(f"SELECT id FROM memories WHERE {condition}", params).fetchall()}
        missing = sorted(set(ids) - found)
        raise NotFoundError(f"cannot store a vector for memory {missing[0] if missing else '?'}: no such memory "
                            "(deleted meanwhile by an erase or purge of its scope?)")  # fmt: skip


def upsert_vectors(
    d: Dialect, tx: Tx, vectors: Sequence[tuple[str, Vector, str, str | None]], *, replace: bool = True
) -> int:
    """(embedding id, vector, memory id, text hash or None) rows into memory_vectors, one vector per memory: the
    new one replaces the stored one, or (``replace=False``) is skipped. The text hash marks the vector as the
    cached embedding of that text as well. Returns the rows written."""
    column = d.vector_column
    conflict = (
        f"DO UPDATE SET embedding_id = excluded.embedding_id, {column} = excluded.{column}, "
        "text_hash = excluded.text_hash"
    )
    return tx.executemany(
        f"INSERT INTO memory_vectors (memory_seq, embedding_id, {column}, text_hash) SELECT seq, ?, ?, ? "
        f"FROM memories WHERE id = ? ON CONFLICT (memory_seq) {conflict if replace else 'DO NOTHING'}",
        [(embedding_id, d.vector(vector), digest, memory_id) for embedding_id, vector, memory_id, digest in vectors],
    ).rowcount
