"""The embedded default backend: one SQLite file holding memories, raw turns, history and vectors."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memstrata.errors import ConflictError
from memstrata.graph.model import Entity, Relation
from memstrata.query import Filters, ListQuery
from memstrata.storage.graph_rows import ENTITY_COLUMNS, RELATION_COLUMNS
from memstrata.storage.protocol import ScoredId, StoreStats, Vector, WriteBatch
from memstrata.storage.sqlite.connection import connect, retry_locked
from memstrata.storage.sqlite.erase import count_scope_rows, erase_scope_rows
from memstrata.storage.sqlite.graph import (
    row_to_entity,
    row_to_relation,
    select_entities,
    select_entity_vectors,
    select_relations,
    walk,
)
from memstrata.storage.sqlite.migrations import migrate
from memstrata.storage.sqlite.rows import (
    HISTORY_COLUMNS,
    JOB_COLUMNS,
    MEMORY_COLUMNS,
    MESSAGE_COLUMNS,
    row_to_history,
    row_to_job,
    row_to_memory,
    row_to_message,
    ts,
)
from memstrata.storage.sqlite.where import Where, memory_where, memory_where_unscoped, scope_where
from memstrata.storage.sqlite.writes import apply_batch, bump
from memstrata.storage.vector_index import IndexFilter, IndexRow, VectorIndex
from memstrata.types import HistoryEvent, Job, JobStatus, MemoryItem, Scope, StoredMessage


class SQLiteStore:
    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._timeout = busy_timeout_s
        self._lock = threading.RLock()
        self._conn = connect(self.path, busy_timeout_s=busy_timeout_s)
        self.schema_version = retry_locked(lambda: migrate(self._conn), timeout_s=busy_timeout_s)
        self._index: VectorIndex | None = None
        self._index_state: tuple[str, str] | None = None  # (epoch, embedding id) the index was built for
        self._index_rev = -1

    # --- plumbing -----------------------------------------------------------------------
    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction. BEGIN IMMEDIATE takes the write lock up front, so two writers
        queue on the busy timeout instead of failing on a lock upgrade."""
        with self._lock:
            retry_locked(lambda: self._conn.execute("BEGIN IMMEDIATE"), timeout_s=self._timeout)
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return retry_locked(lambda: self._conn.execute(sql, params).fetchall(), timeout_s=self._timeout)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- writes -------------------------------------------------------------------------
    def write(self, batch: WriteBatch) -> None:
        if batch.is_empty():
            return
        try:
            with self._transaction() as conn:
                apply_batch(conn, batch)
        except sqlite3.IntegrityError as exc:
            raise ConflictError(
                f"the write clashes with data already in the store ({exc}); nothing was written"
            ) from None

    def record_access(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> None:
        if not memory_ids:
            return
        where = scope_where(scope, alias="memories")
        marks = ",".join("?" * len(memory_ids))
        with self._transaction() as conn:
            conn.execute(
                f"UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                f"WHERE id IN ({marks}) AND {where.sql()}",
                (ts(at), *memory_ids, *where.params),
            )

    def purge(self, scope: Scope, memory_ids: Sequence[str]) -> int:
        where = scope_where(scope, alias="memories")
        marks = ",".join("?" * len(memory_ids))
        with self._transaction() as conn:
            rows = conn.execute(
                f"SELECT seq, id FROM memories WHERE id IN ({marks}) AND {where.sql()}",
                (*memory_ids, *where.params),
            ).fetchall()
            for seq, memory_id in rows:
                conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (seq,))
                conn.execute("DELETE FROM kv_facts WHERE memory_id = ?", (memory_id,))
                conn.execute("DELETE FROM history WHERE memory_id = ?", (memory_id,))
                conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))  # vectors cascade
            if rows:
                bump(conn, "index_epoch")
        return len(rows)

    def reset(self) -> None:
        with self._transaction() as conn:
            for table in (
                "memory_fts",
                "memory_vectors",
                "kv_facts",
                "history",
                "messages",
                "memories",
                "embedding_cache",
                "jobs",
                "entities",
                "relations",
            ):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM meta WHERE key = 'embedding_id'")
            bump(conn, "index_epoch")

    # --- reads --------------------------------------------------------------------------
    def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        where = scope_where(scope, by_key=True)
        marks = ",".join("?" * len(memory_ids))
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({marks}) AND {where.sql()}",
            (*memory_ids, *where.params),
        )
        by_id = {item.id: item for item in map(row_to_memory, rows)}
        return [by_id[memory_id] for memory_id in memory_ids if memory_id in by_id]

    def list_memories(self, query: ListQuery) -> list[MemoryItem]:
        where = memory_where(query.scope, query.filters)
        direction = "DESC" if query.descending else "ASC"
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()} "
            f"ORDER BY m.{query.order_by} {direction}, m.seq {direction} LIMIT ? OFFSET ?",
            (*where.params, query.limit, query.offset),
        )
        return [row_to_memory(row) for row in rows]

    def count(self, scope: Scope, filters: Filters) -> int:
        where = memory_where(scope, filters)
        return int(self._read(f"SELECT COUNT(*) FROM memories m WHERE {where.sql()}", where.params)[0][0])

    def scan_memories(self, filters: Filters, after: int, limit: int) -> list[tuple[int, MemoryItem]]:
        where = memory_where_unscoped(filters)
        rows = self._read(
            f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > ? AND {where.sql()} ORDER BY m.seq LIMIT ?",
            (after, *where.params, limit),
        )
        return [(row[0], row_to_memory(tuple(row)[1:])) for row in rows]

    def erase_scope(self, scope: Scope) -> dict[str, int]:
        with self._transaction() as conn:
            deleted = erase_scope_rows(conn, scope)
            bump(conn, "index_epoch")
        return deleted

    def count_scope_rows(self, scope: Scope) -> dict[str, int]:
        with self._lock:
            return count_scope_rows(self._conn, scope)

    def find_by_key(self, scope: Scope, key: str) -> MemoryItem | None:
        where = scope_where(scope, alias="k")
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM kv_facts k JOIN memories m ON m.id = k.memory_id "
            f"WHERE k.key = ? AND {where.sql()} ORDER BY m.updated_at DESC LIMIT 1",
            (key, *where.params),
        )
        return row_to_memory(rows[0]) if rows else None

    def find_by_hash(self, scope: Scope, content_hash: str) -> list[MemoryItem]:
        where = scope_where(scope)
        rows = self._read(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.content_hash = ? AND m.status = 'active' "
            f"AND {where.sql()}",
            (content_hash, *where.params),
        )
        return [row_to_memory(row) for row in rows]

    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        unique = list(dict.fromkeys(tokens))
        if not unique:
            return []
        # Every token is quoted as an FTS5 string, so user text can never act as query syntax.
        match = " OR ".join('"' + token.replace('"', '""') + '"' for token in unique)
        where = memory_where(scope, filters)
        rows = self._read(
            "SELECT m.id, bm25(memory_fts) AS rank FROM memory_fts JOIN memories m ON m.seq = memory_fts.rowid "
            f"WHERE memory_fts MATCH ? AND {where.sql()} ORDER BY rank LIMIT ?",
            (match, *where.params, limit),
        )
        return [ScoredId(memory_id, -float(rank)) for memory_id, rank in rows]

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
        with self._lock:
            index = self._synced_index()
            if index is None:
                return []
            allowed = None
            if filters.needs_row_filter():
                where = memory_where(scope, filters)
                seqs = self._read(f"SELECT m.seq FROM memories m WHERE {where.sql()}", where.params)
                allowed = np.fromiter((row[0] for row in seqs), dtype=np.int64, count=len(seqs))
            found = index.search(
                np.asarray(vector, dtype=np.float32),
                IndexFilter(
                    tenant_id=scope.tenant_id or "",
                    user_id=scope.user_id,
                    agent_id=scope.agent_id,
                    session_id=scope.session_id,
                    statuses=[status.value for status in filters.status],
                    kinds=filters.kind,
                    excluded_kinds=filters.exclude_kind,
                    allowed_seqs=allowed,
                ),
                limit,
            )
            return self._seqs_to_ids(scope, found)

    def _seqs_to_ids(self, scope: Scope, found: list[tuple[int, float]]) -> list[ScoredId]:
        if not found:
            return []
        where = scope_where(scope, by_key=True)  # checked again in SQL: the index is a cache, the DB is the truth
        marks = ",".join("?" * len(found))
        rows = self._read(
            f"SELECT m.seq, m.id FROM memories m WHERE m.seq IN ({marks}) AND {where.sql()}",
            (*[seq for seq, _ in found], *where.params),
        )
        ids = dict(rows)
        return [ScoredId(ids[seq], score) for seq, score in found if seq in ids]

    def _synced_index(self) -> VectorIndex | None:
        """Bring the in-process index up to date with rows other processes may have written."""
        with self._lock:
            self._conn.execute("BEGIN")  # one snapshot for the counters and the changed rows
            try:
                meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
                embedding_id = meta.get("embedding_id")
                if embedding_id is None:
                    return None
                state = (meta["index_epoch"], embedding_id)
                if self._index is None or self._index_state != state:
                    self._index = VectorIndex(dims=int(embedding_id.rsplit(":", 1)[1]))
                    self._index_state = state
                    self._index_rev = -1
                rev = int(meta["rev"])
                if rev > self._index_rev:
                    self._apply_changes(self._index, embedding_id)
                    self._index_rev = rev
                return self._index
            finally:
                self._conn.execute("COMMIT")

    def _apply_changes(self, index: VectorIndex, embedding_id: str) -> None:
        cursor = self._conn.execute(
            "SELECT m.seq, m.tenant_id, m.user_id, m.agent_id, m.session_id, m.status, m.kind, v.vector "
            "FROM memories m "
            "LEFT JOIN memory_vectors v ON v.memory_seq = m.seq AND v.embedding_id = ? WHERE m.rev > ?",
            (embedding_id, self._index_rev),
        )
        while chunk := cursor.fetchmany(50_000):
            fresh = []
            for seq, tenant_id, user_id, agent_id, session_id, status, kind, blob in chunk:
                if blob is None:
                    index.update_attributes(seq, status=status, kind=kind)
                else:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    fresh.append(IndexRow(seq, tenant_id, user_id, agent_id, session_id, status, kind, vector))
            index.upsert(fresh)

    def messages_by_id(self, scope: Scope, message_ids: Sequence[str]) -> list[StoredMessage]:
        if not message_ids:
            return []
        where = scope_where(scope, alias="t")
        marks = ",".join("?" * len(message_ids))
        rows = self._read(
            f"SELECT {MESSAGE_COLUMNS} FROM messages t WHERE t.id IN ({marks}) AND {where.sql()} "
            "ORDER BY t.timestamp, t.seq",
            (*message_ids, *where.params),
        )
        return [row_to_message(tuple(row)) for row in rows]

    # --- jobs ---------------------------------------------------------------------------
    def claim_jobs(self, now: datetime, lease_until: datetime, limit: int) -> list[Job]:
        claimable = "(status = 'queued' OR (status = 'running' AND lease_until < ?))"
        with self._transaction() as conn:
            first = conn.execute(
                f"SELECT tenant_id, user_id, agent_id, session_id FROM jobs WHERE {claimable} ORDER BY seq LIMIT 1",
                (ts(now),),
            ).fetchone()
            if first is None:
                return []
            # Jobs of one scope are claimed together so their turns share one model call.
            rows = conn.execute(
                f"UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, updated_at = ? "
                f"WHERE seq IN (SELECT seq FROM jobs WHERE {claimable} AND tenant_id = ? AND user_id = ? "
                f"AND agent_id = ? AND session_id = ? ORDER BY seq LIMIT ?) RETURNING {JOB_COLUMNS}",
                (ts(lease_until), ts(now), ts(now), *first, limit),
            ).fetchall()
        return sorted((row_to_job(tuple(row)) for row in rows), key=lambda job: job.created_at)

    def list_jobs(self, scope: Scope | None, statuses: Sequence[JobStatus], limit: int) -> list[Job]:
        where = scope_where(scope, alias="j") if scope else Where()
        if statuses:
            where.add(f"j.status IN ({','.join('?' * len(statuses))})", *[s.value for s in statuses])
        rows = self._read(
            f"SELECT {JOB_COLUMNS} FROM jobs j WHERE {where.sql()} ORDER BY j.seq LIMIT ?", (*where.params, limit)
        )
        return [row_to_job(tuple(row)) for row in rows]

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEvent]:
        where = scope_where(scope, alias="h")
        rows = self._read(
            f"SELECT {HISTORY_COLUMNS} FROM history h WHERE (h.memory_id = ? "
            f"OR json_extract(h.details, '$.supersedes') = ?) AND {where.sql()} ORDER BY h.seq",
            (memory_id, memory_id, *where.params),
        )
        return [row_to_history(tuple(row)) for row in rows]

    def messages(self, scope: Scope, limit: int = 1000) -> list[StoredMessage]:
        where = scope_where(scope, alias="t")
        rows = self._read(
            f"SELECT {MESSAGE_COLUMNS} FROM messages t WHERE {where.sql()} ORDER BY t.timestamp, t.seq LIMIT ?",
            (*where.params, limit),
        )
        return [row_to_message(tuple(row)) for row in rows]

    # --- embeddings ---------------------------------------------------------------------
    def embedding_id(self) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key = 'embedding_id'")
        return str(rows[0][0]) if rows else None

    def set_embedding_id(self, embedding_id: str) -> None:
        with self._transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_id', ?)", (embedding_id,))

    def cached_vectors(self, embedding_id: str, text_hashes: Sequence[str]) -> dict[str, Vector]:
        found: dict[str, Vector] = {}
        unique = list(dict.fromkeys(text_hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            rows = self._read(
                f"SELECT text_hash, vector FROM embedding_cache WHERE embedding_id = ? "
                f"AND text_hash IN ({','.join('?' * len(part))})",
                (embedding_id, *part),
            )
            found.update((digest, np.frombuffer(blob, dtype=np.float32)) for digest, blob in rows)
        return found

    def memories_needing_vectors(self, embedding_id: str, batch_size: int) -> Iterator[list[MemoryItem]]:
        last_seq = 0
        while True:
            rows = self._read(
                f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > ? AND NOT EXISTS "
                "(SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq AND v.embedding_id = ?) "
                "ORDER BY m.seq LIMIT ?",
                (last_seq, embedding_id, batch_size),
            )
            if not rows:
                return
            last_seq = rows[-1][0]
            yield [row_to_memory(tuple(row)[1:]) for row in rows]

    # --- graph --------------------------------------------------------------------------
    def graph_entities(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> list[Entity]:
        with self._lock:
            return select_entities(self._conn, scope, entity_ids)

    def entity_vectors(self, scope: Scope, embedding_id: str) -> dict[str, Vector]:
        with self._lock:
            return select_entity_vectors(self._conn, scope, embedding_id)

    def graph_relations(
        self,
        scope: Scope,
        *,
        entity_ids: Sequence[str] | None = None,
        relation_ids: Sequence[str] | None = None,
        include_closed: bool = False,
    ) -> list[Relation]:
        with self._lock:
            return select_relations(self._conn, scope, entity_ids, relation_ids, include_closed)

    def graph_walk(
        self, scope: Scope, start_ids: Sequence[str], hops: int, *, include_closed: bool = False
    ) -> list[tuple[Relation, int]]:
        if not start_ids or hops < 1:
            return []
        with self._lock:
            return walk(self._conn, scope, start_ids, hops, include_closed)

    # --- whole-store --------------------------------------------------------------------
    def export_all(self) -> Iterator[tuple[str, object]]:
        """Every record, in an order import can replay: memories, vectors, history, messages."""
        for row in self._read(f"SELECT {MEMORY_COLUMNS} FROM memories m ORDER BY m.seq"):
            yield "memory", row_to_memory(row)
        embedding_id = self.embedding_id()
        if embedding_id:
            for memory_id, blob in self._read(
                "SELECT m.id, v.vector FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq "
                "WHERE v.embedding_id = ? ORDER BY m.seq",
                (embedding_id,),
            ):
                yield "vector", (memory_id, embedding_id, np.frombuffer(blob, dtype=np.float32))
        for row in self._read(f"SELECT {HISTORY_COLUMNS} FROM history ORDER BY seq"):
            yield "history", row_to_history(tuple(row))
        for row in self._read(f"SELECT {MESSAGE_COLUMNS} FROM messages ORDER BY seq"):
            yield "message", row_to_message(tuple(row))
        for row in self._read(f"SELECT {ENTITY_COLUMNS} FROM entities ORDER BY seq"):
            yield "entity", row_to_entity(tuple(row))
        for row in self._read(f"SELECT {RELATION_COLUMNS} FROM relations ORDER BY seq"):
            yield "relation", row_to_relation(tuple(row))

    def stats(self, scope: Scope | None = None) -> StoreStats:
        where = scope_where(scope) if scope else Where()
        by_status = dict(
            self._read(f"SELECT status, COUNT(*) FROM memories m WHERE {where.sql()} GROUP BY status", where.params)
        )
        by_kind = dict(
            self._read(f"SELECT kind, COUNT(*) FROM memories m WHERE {where.sql()} GROUP BY kind", where.params)
        )
        t_where = scope_where(scope, alias="t") if scope else Where()
        h_where = scope_where(scope, alias="h") if scope else Where()
        messages = self._read(f"SELECT COUNT(*) FROM messages t WHERE {t_where.sql()}", t_where.params)[0][0]
        history = self._read(f"SELECT COUNT(*) FROM history h WHERE {h_where.sql()}", h_where.params)[0][0]
        vectors = self._read(
            f"SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq WHERE {where.sql()}",
            where.params,
        )[0][0]
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return StoreStats(
            memories_by_status=by_status,
            memories_by_kind=by_kind,
            messages=int(messages),
            history_events=int(history),
            vectors=int(vectors),
            embedding_id=self.embedding_id(),
            schema_version=self.schema_version,
            location=self.location,
            size_bytes=size,
            extra=self._graph_counts(scope),
        )

    def _graph_counts(self, scope: Scope | None) -> dict[str, int]:
        where = scope_where(scope, alias="t") if scope else Where()
        entities = self._read(f"SELECT COUNT(*) FROM entities t WHERE {where.sql()}", where.params)[0][0]
        relations = self._read(
            f"SELECT COUNT(*), COUNT(t.valid_to) FROM relations t WHERE {where.sql()}", where.params
        )[0]
        return {"entities": int(entities), "relations": int(relations[0]), "closed_relations": int(relations[1])}
