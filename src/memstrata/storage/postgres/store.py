"""The server backend: PostgreSQL + pgvector, shared by many processes through a connection pool.

Same behaviour as the SQLite store (the contract tests run on both); what differs is how:
vectors live in pgvector with an HNSW index per dimension, keyword search uses a tsvector of
the same pre-segmented tokens FTS5 gets, metadata is JSONB, and writers run concurrently under
row locks instead of one file lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import psycopg

from memstrata.graph.model import Entity, Relation
from memstrata.query import Filters, ListQuery
from memstrata.storage.graph_rows import ENTITY_COLUMNS, RELATION_COLUMNS
from memstrata.storage.postgres import graph, search
from memstrata.storage.postgres.connection import connect, masked, open_pool, retrying, translated, vector_oid
from memstrata.storage.postgres.erase import count_scope_rows, erase_scope_rows
from memstrata.storage.postgres.migrations import ensure_vector_index, migrate
from memstrata.storage.postgres.rows import (
    HISTORY_COLUMNS,
    JOB_COLUMNS,
    MEMORY_COLUMNS,
    MESSAGE_COLUMNS,
    row_to_entity,
    row_to_history,
    row_to_job,
    row_to_memory,
    row_to_message,
    row_to_relation,
)
from memstrata.storage.postgres.where import Where, memory_where, memory_where_unscoped, scope_where
from memstrata.storage.postgres.writes import apply_batch, embedding_dims
from memstrata.storage.protocol import ScoredId, StoreStats, Vector, WriteBatch
from memstrata.types import HistoryEvent, Job, JobStatus, MemoryItem, Scope, StoredMessage

T = TypeVar("T")
Conn = psycopg.Connection[Any]
CLAIM_LOCK = 0x6D656D7374726174 + 2  # one claimer at a time, so a scope's queued jobs go to one worker
TABLES = (
    "memories", "memory_vectors", "messages", "history", "kv_facts", "embedding_cache", "jobs", "meta", "entities",
    "relations",
)  # fmt: skip


class PostgresStore:
    def __init__(self, url: str, *, pool_size: int = 8, timeout_s: float = 30.0) -> None:
        self.url = url
        self.location = masked(url)
        with translated(self.location), connect(url, timeout_s=timeout_s) as conn:
            self.schema_version = migrate(conn)
            oid = vector_oid(conn)
            self._ensure_index(conn)
        self._pool = open_pool(url, oid=oid, size=pool_size, timeout_s=timeout_s)

    # --- plumbing -----------------------------------------------------------------------
    def _run(self, action: Callable[[Conn], T]) -> T:
        """One statement or a few reads on a pooled autocommit connection."""
        with translated(self.location), self._pool.connection() as conn:
            return action(conn)

    def _transaction(self, action: Callable[[Conn], T]) -> T:
        """``action`` in one transaction, run again if PostgreSQL aborts it to break a deadlock."""

        def attempt() -> T:
            with self._pool.connection() as conn, conn.transaction():
                return action(conn)

        with translated(self.location):
            return retrying(attempt)

    def _read(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[Any]:
        return self._run(lambda conn: conn.execute(sql, params, binary=binary).fetchall())

    @staticmethod
    def _ensure_index(conn: Conn) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
        if row is not None:
            with conn.transaction():
                ensure_vector_index(conn, embedding_dims(str(row[0])))

    def close(self) -> None:
        self._pool.close()

    # --- writes -------------------------------------------------------------------------
    def write(self, batch: WriteBatch) -> None:
        if not batch.is_empty():
            self._transaction(lambda conn: apply_batch(conn, batch))

    def record_access(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> None:
        """Best-effort counters: rows a writer holds locked right now are skipped, never waited for."""
        if not memory_ids:
            return
        where = scope_where(scope, alias="memories")
        self._run(
            lambda conn: conn.execute(
                "WITH hit AS (SELECT seq FROM memories WHERE id = ANY(%s) AND "
                f"{where.sql()} ORDER BY seq FOR UPDATE SKIP LOCKED) "
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s "
                "WHERE seq IN (SELECT seq FROM hit)",
                (list(memory_ids), *where.params, at),
            )
        )

    def purge(self, scope: Scope, memory_ids: Sequence[str]) -> int:
        """Hard delete: rows, vectors (cascade), keyword tokens (same row), keys and history."""
        where = scope_where(scope, alias="memories")

        def run(conn: Conn) -> int:
            ids = [
                row[0]
                for row in conn.execute(
                    f"DELETE FROM memories WHERE id = ANY(%s) AND {where.sql()} RETURNING id",
                    (list(memory_ids), *where.params),
                ).fetchall()
            ]
            if ids:
                conn.execute("DELETE FROM kv_facts WHERE memory_id = ANY(%s)", (ids,))
                conn.execute("DELETE FROM history WHERE memory_id = ANY(%s)", (ids,))
            return len(ids)

        return self._transaction(run) if memory_ids else 0

    def reset(self) -> None:
        def run(conn: Conn) -> None:
            conn.execute(
                "TRUNCATE memory_vectors, memories, kv_facts, history, messages, embedding_cache, jobs, entities, "
                "relations"
            )
            conn.execute("DELETE FROM meta WHERE key = 'embedding_id'")

        self._transaction(run)

    def erase_scope(self, scope: Scope) -> dict[str, int]:
        return self._transaction(lambda conn: erase_scope_rows(conn, scope))

    def count_scope_rows(self, scope: Scope) -> dict[str, int]:
        return self._run(lambda conn: count_scope_rows(conn, scope))

    # --- reads --------------------------------------------------------------------------
    def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        where = scope_where(scope)
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ANY(%s) AND {where.sql()}",
            (list(memory_ids), *where.params),
        )
        by_id = {item.id: item for item in map(row_to_memory, rows)}
        return [by_id[memory_id] for memory_id in memory_ids if memory_id in by_id]

    def list_memories(self, query: ListQuery) -> list[MemoryItem]:
        where = memory_where(query.scope, query.filters)
        # SQLite sorts NULL first ascending and last descending; say so explicitly here.
        direction = "DESC NULLS LAST" if query.descending else "ASC NULLS FIRST"
        seq_direction = "DESC" if query.descending else "ASC"
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()} "
            f"ORDER BY m.{query.order_by} {direction}, m.seq {seq_direction} LIMIT %s OFFSET %s",
            (*where.params, query.limit, query.offset),
        )
        return [row_to_memory(row) for row in rows]

    def count(self, scope: Scope, filters: Filters) -> int:
        where = memory_where(scope, filters)
        return int(self._read(f"SELECT COUNT(*) FROM memories m WHERE {where.sql()}", where.params)[0][0])

    def scan_memories(self, filters: Filters, after: int, limit: int) -> list[tuple[int, MemoryItem]]:
        where = memory_where_unscoped(filters)
        rows = self._read(
            f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > %s AND {where.sql()} "
            "ORDER BY m.seq LIMIT %s",
            (after, *where.params, limit),
        )
        return [(row[0], row_to_memory(tuple(row)[1:])) for row in rows]

    def find_by_key(self, scope: Scope, key: str) -> MemoryItem | None:
        where = scope_where(scope, alias="k")
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM kv_facts k JOIN memories m ON m.id = k.memory_id "
            f"WHERE k.key = %s AND {where.sql()} ORDER BY m.updated_at DESC LIMIT 1",
            (key, *where.params),
        )
        return row_to_memory(rows[0]) if rows else None

    def find_by_hash(self, scope: Scope, content_hash: str) -> list[MemoryItem]:
        where = scope_where(scope)
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.content_hash = %s AND m.status = 'active' "
            f"AND {where.sql()} ORDER BY m.seq",
            (content_hash, *where.params),
        )
        return [row_to_memory(row) for row in rows]

    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        return self._run(lambda conn: search.keyword_search(conn, scope, tokens, filters, limit))

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
        return self._run(lambda conn: search.vector_search(conn, scope, vector, filters, limit))

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEvent]:
        where = scope_where(scope, alias="h")
        rows = self._read(
            f"SELECT {HISTORY_COLUMNS} FROM history h WHERE (h.memory_id = %s "
            f"OR h.details ->> 'supersedes' = %s) AND {where.sql()} ORDER BY h.seq",
            (memory_id, memory_id, *where.params),
        )
        return [row_to_history(tuple(row)) for row in rows]

    def messages(self, scope: Scope, limit: int = 1000) -> list[StoredMessage]:
        where = scope_where(scope, alias="t")
        rows = self._read(
            f"SELECT {MESSAGE_COLUMNS} FROM messages t WHERE {where.sql()} ORDER BY t.timestamp, t.seq LIMIT %s",
            (*where.params, limit),
        )
        return [row_to_message(tuple(row)) for row in rows]

    def messages_by_id(self, scope: Scope, message_ids: Sequence[str]) -> list[StoredMessage]:
        if not message_ids:
            return []
        where = scope_where(scope, alias="t")
        rows = self._read(
            f"SELECT {MESSAGE_COLUMNS} FROM messages t WHERE t.id = ANY(%s) AND {where.sql()} "
            "ORDER BY t.timestamp, t.seq",
            (list(message_ids), *where.params),
        )
        return [row_to_message(tuple(row)) for row in rows]

    # --- graph --------------------------------------------------------------------------
    def graph_entities(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> list[Entity]:
        return self._run(lambda conn: graph.select_entities(conn, scope, entity_ids))

    def entity_vectors(self, scope: Scope, embedding_id: str) -> dict[str, Vector]:
        return self._run(lambda conn: graph.select_entity_vectors(conn, scope, embedding_id))

    def graph_relations(
        self,
        scope: Scope,
        *,
        entity_ids: Sequence[str] | None = None,
        relation_ids: Sequence[str] | None = None,
        include_closed: bool = False,
    ) -> list[Relation]:
        return self._run(lambda conn: graph.select_relations(conn, scope, entity_ids, relation_ids, include_closed))

    def graph_walk(
        self, scope: Scope, start_ids: Sequence[str], hops: int, *, include_closed: bool = False
    ) -> list[tuple[Relation, int]]:
        if not start_ids or hops < 1:
            return []
        return self._run(lambda conn: graph.walk(conn, scope, start_ids, hops, include_closed))

    # --- jobs ---------------------------------------------------------------------------
    def claim_jobs(self, now: datetime, lease_until: datetime, limit: int) -> list[Job]:
        claimable = "(status = 'queued' OR (status = 'running' AND lease_until < %s))"

        def run(conn: Conn) -> list[Job]:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (CLAIM_LOCK,))
            first = conn.execute(
                f"SELECT tenant_id, user_id, agent_id, session_id FROM jobs WHERE {claimable} ORDER BY seq LIMIT 1",
                (now,),
            ).fetchone()
            if first is None:
                return []
            # Jobs of one scope are claimed together so their turns share one model call.
            rows = conn.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = %s, updated_at = %s "
                f"WHERE seq IN (SELECT seq FROM jobs WHERE {claimable} AND tenant_id = %s AND user_id = %s "
                f"AND agent_id = %s AND session_id = %s ORDER BY seq LIMIT %s) RETURNING {JOB_COLUMNS}",
                (lease_until, now, now, *first, limit),
            ).fetchall()
            return sorted((row_to_job(tuple(row)) for row in rows), key=lambda job: job.created_at)

        return self._transaction(run)

    def list_jobs(self, scope: Scope | None, statuses: Sequence[JobStatus], limit: int) -> list[Job]:
        where = scope_where(scope, alias="j") if scope else Where()
        if statuses:
            where.add("j.status = ANY(%s)", [status.value for status in statuses])
        rows = self._read(
            f"SELECT {JOB_COLUMNS} FROM jobs j WHERE {where.sql()} ORDER BY j.seq LIMIT %s", (*where.params, limit)
        )
        return [row_to_job(tuple(row)) for row in rows]

    # --- embeddings ---------------------------------------------------------------------
    def embedding_id(self) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'embedding_id'")
        return str(rows[0][0]) if rows else None

    def set_embedding_id(self, embedding_id: str) -> None:
        def run(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('embedding_id', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (embedding_id,),
            )
            ensure_vector_index(conn, embedding_dims(embedding_id))

        self._transaction(run)

    def cached_vectors(self, embedding_id: str, text_hashes: Sequence[str]) -> dict[str, Vector]:
        if not text_hashes:
            return {}
        rows = self._read(
            "SELECT text_hash, vector FROM embedding_cache WHERE embedding_id = %s AND text_hash = ANY(%s)",
            (embedding_id, list(dict.fromkeys(text_hashes))),
        )
        return {digest: np.frombuffer(blob, dtype="<f4").astype(np.float32) for digest, blob in rows}

    def memories_needing_vectors(self, embedding_id: str, batch_size: int) -> Iterator[list[MemoryItem]]:
        last_seq = 0
        while True:
            rows = self._read(
                f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > %s AND NOT EXISTS "
                "(SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq AND v.embedding_id = %s) "
                "ORDER BY m.seq LIMIT %s",
                (last_seq, embedding_id, batch_size),
            )
            if not rows:
                return
            last_seq = rows[-1][0]
            yield [row_to_memory(tuple(row)[1:]) for row in rows]

    # --- whole-store --------------------------------------------------------------------
    def _chunks(self, sql: str, params: Sequence[Any] = (), *, size: int = 5000) -> Iterator[tuple[Any, ...]]:
        """Rows of ``SELECT seq, ... WHERE seq > %s ... ORDER BY seq LIMIT %s`` page by page."""
        last = 0
        while rows := self._read(sql, (*params, last, size), binary=True):
            last = rows[-1][0]
            yield from (tuple(row)[1:] for row in rows)

    def export_all(self) -> Iterator[tuple[str, object]]:
        """Every record, in an order import can replay: memories, vectors, history, messages, entities, relations."""
        for row in self._chunks(
            f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > %s ORDER BY m.seq LIMIT %s"
        ):
            yield "memory", row_to_memory(row)
        embedding_id = self.embedding_id()
        if embedding_id:
            for memory_id, vector in self._chunks(
                "SELECT v.memory_seq, m.id, v.embedding FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq "
                "WHERE v.embedding_id = %s AND v.memory_seq > %s ORDER BY v.memory_seq LIMIT %s",
                (embedding_id,),
            ):
                yield "vector", (memory_id, embedding_id, vector)
        for row in self._chunks(f"SELECT seq, {HISTORY_COLUMNS} FROM history WHERE seq > %s ORDER BY seq LIMIT %s"):
            yield "history", row_to_history(row)
        for row in self._chunks(f"SELECT seq, {MESSAGE_COLUMNS} FROM messages WHERE seq > %s ORDER BY seq LIMIT %s"):
            yield "message", row_to_message(row)
        for row in self._chunks(f"SELECT seq, {ENTITY_COLUMNS} FROM entities WHERE seq > %s ORDER BY seq LIMIT %s"):
            yield "entity", row_to_entity(row)
        for row in self._chunks(f"SELECT seq, {RELATION_COLUMNS} FROM relations WHERE seq > %s ORDER BY seq LIMIT %s"):
            yield "relation", row_to_relation(row)

    def stats(self, scope: Scope | None = None) -> StoreStats:
        where = scope_where(scope) if scope else Where()
        t_where = scope_where(scope, alias="t") if scope else Where()
        h_where = scope_where(scope, alias="h") if scope else Where()

        def run(conn: Conn) -> StoreStats:
            def one(sql: str, params: Sequence[Any]) -> int:
                row = conn.execute(sql, params).fetchone()
                return int(row[0]) if row and row[0] is not None else 0

            by_status = dict(
                conn.execute(
                    f"SELECT status, COUNT(*) FROM memories m WHERE {where.sql()} GROUP BY status", where.params
                ).fetchall()
            )
            by_kind = dict(
                conn.execute(
                    f"SELECT kind, COUNT(*) FROM memories m WHERE {where.sql()} GROUP BY kind", where.params
                ).fetchall()
            )
            embedding = conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
            return StoreStats(
                memories_by_status=by_status,
                memories_by_kind=by_kind,
                messages=one(f"SELECT COUNT(*) FROM messages t WHERE {t_where.sql()}", t_where.params),
                history_events=one(f"SELECT COUNT(*) FROM history h WHERE {h_where.sql()}", h_where.params),
                vectors=one(
                    "SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq "
                    f"WHERE {where.sql()}",
                    where.params,
                ),
                embedding_id=str(embedding[0]) if embedding else None,
                schema_version=self.schema_version,
                location=self.location,
                size_bytes=one(
                    "SELECT SUM(pg_total_relation_size(to_regclass(t))) FROM unnest(%s::text[]) t", (list(TABLES),)
                ),
                extra=self._graph_counts(conn, scope),
            )

        return self._run(run)

    @staticmethod
    def _graph_counts(conn: Conn, scope: Scope | None) -> dict[str, int]:
        where = scope_where(scope, alias="t") if scope else Where()
        entities = conn.execute(f"SELECT COUNT(*) FROM entities t WHERE {where.sql()}", where.params).fetchall()[0]
        relations = conn.execute(
            f"SELECT COUNT(*), COUNT(t.valid_to) FROM relations t WHERE {where.sql()}", where.params
        ).fetchall()[0]
        return {"entities": int(entities[0]), "relations": int(relations[0]), "closed_relations": int(relations[1])}
