"""The one SQL store: every Store method, written once over a backend's :class:`~.dialect.Dialect`."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import numpy as np

from memstrata.query import Filters, ListQuery
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import ScoredId, StoreStats, Vector, WriteBatch
from memstrata.storage.sql import graph, rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.erase import count_scope_rows, erase_scope_rows, purge_rows
from memstrata.storage.sql.knowledge import SOURCE_COLUMNS, KnowledgeTables
from memstrata.storage.sql.knowledge import source as source_row
from memstrata.storage.sql.process import ProcessTables
from memstrata.storage.sql.process_rows import PROCESS_TABLES
from memstrata.storage.sql.rows import (
    ENTITY_COLUMNS,
    HISTORY_COLUMNS,
    JOB_COLUMNS,
    MEMORY_COLUMNS,
    MESSAGE_COLUMNS,
    RELATION_COLUMNS,
)
from memstrata.storage.sql.where import memory_where, scope_where
from memstrata.storage.sql.writes import apply_batch
from memstrata.stored_words import VERSION as STORED_WORDS_VERSION
from memstrata.stored_words import stored_words
from memstrata.types import AdminScope, HistoryEvent, Job, JobStatus, MemoryItem, MemoryStatus, Scope, StoredMessage

log = logging.getLogger(__name__)
AUTO_KEYWORD_REBUILD_ROWS = 50_000  # about 10 s on two cores; larger stores are rebuilt by `memstrata reindex`
TABLES = ("memory_vectors", "kv_facts", "history", "messages", "memories", "embedding_cache", "jobs", "entities",
          "relations", *(table for _, table, _, _ in PROCESS_TABLES), "knowledge_sources")  # fmt: skip


class SQLStore:
    def __init__(self, dialect: Dialect, schema_version: int) -> None:
        self.dialect = dialect
        self.location = dialect.location
        self.schema_version = schema_version
        self._process = ProcessTables(dialect)
        self._knowledge = KnowledgeTables(dialect)
        self._keep_keyword_index_current()

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.dialect.read(lambda tx: tx.execute(sql, params).fetchall())

    def _memories(self, sql: str, params: Sequence[Any] = ()) -> list[MemoryItem]:
        return [rows.memory(self.dialect, row) for row in self._rows(sql, params)]

    @property
    def process(self) -> ProcessTables:
        return self._process

    @property
    def knowledge(self) -> KnowledgeTables:
        return self._knowledge

    def close(self) -> None:
        self.dialect.close()

    # --- writes -------------------------------------------------------------------------
    def write(self, batch: WriteBatch) -> None:
        if not batch.is_empty():
            self.dialect.transaction(lambda tx: apply_batch(self.dialect, tx, batch))

    def record_access(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> int:
        """Best-effort counters: rows a writer holds locked right now are skipped, never waited for."""
        if not memory_ids:
            return 0
        where = scope_where(self.dialect, scope, "memories")
        condition, params = self.dialect.in_("id", list(memory_ids))
        select = f"SELECT seq FROM memories WHERE {condition} AND {where.sql()} ORDER BY seq{self.dialect.skip_locked}"

        def count(tx: Tx) -> int:
            seqs = [seq for (seq,) in tx.execute(select, (*params, *where.params)).fetchall()]
            if seqs:
                chosen, seq_params = self.dialect.in_("seq", seqs)
                tx.execute(f"UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE {chosen}",
                           (self.dialect.ts(at), *seq_params))  # fmt: skip
            return len(seqs)

        counted: int = self.dialect.transaction(count)
        return counted

    def purge(self, scope: Scope, memory_ids: Sequence[str], *, keep_embeddings: bool = False) -> int:
        if not memory_ids:
            return 0
        purged = self.dialect.transaction(
            lambda tx: purge_rows(self.dialect, tx, scope, memory_ids, keep_embeddings=keep_embeddings)
        )
        if purged:
            self.dialect.scrub()
        return purged

    def reset(self) -> None:
        def run(tx: Tx) -> None:
            self.dialect.drop_memories(tx, None)
            for table in TABLES:
                tx.execute(f"DELETE FROM {table}")
            tx.execute("DELETE FROM meta WHERE key = 'embedding_id'")

        self.dialect.transaction(run)

    def erase_scope(self, scope: Scope) -> dict[str, int]:
        deleted = self.dialect.transaction(lambda tx: erase_scope_rows(self.dialect, tx, scope))
        self.dialect.scrub()
        return deleted

    def count_scope_rows(self, scope: Scope) -> dict[str, int]:
        return self.dialect.read(lambda tx: count_scope_rows(self.dialect, tx, scope))

    def find_traces(self, needles: Sequence[str]) -> dict[str, list[str]]:
        return self.dialect.find_traces([needle for needle in dict.fromkeys(needles) if needle])

    def compact(self) -> None:
        self.dialect.compact()

    def texts_held(self, needles: Sequence[str]) -> set[str]:
        held: set[str] = set()
        for needle in dict.fromkeys(needles):
            pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            sql = (
                "SELECT 1 WHERE EXISTS (SELECT 1 FROM memories WHERE text LIKE ? ESCAPE '\\') "
                "OR EXISTS (SELECT 1 FROM messages WHERE content LIKE ? ESCAPE '\\')"
            )
            if self._rows(sql, (pattern, pattern)):
                held.add(needle)
        return held

    # --- reads --------------------------------------------------------------------------
    def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        where = scope_where(self.dialect, scope, by_key=True)
        condition, params = self.dialect.in_("m.id", list(memory_ids))
        found = self._memories(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {condition} AND {where.sql()}", (*params, *where.params)
        )
        by_id = {item.id: item for item in found}
        return [by_id[memory_id] for memory_id in memory_ids if memory_id in by_id]

    def list_memories(self, query: ListQuery) -> list[MemoryItem]:
        where = memory_where(self.dialect, query.scope, query.filters)
        direction = "DESC" if query.descending else "ASC"
        nulls = "LAST" if query.descending else "FIRST"
        return self._memories(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()} "
            f"ORDER BY m.{query.order_by} {direction} NULLS {nulls}, m.seq {direction} LIMIT ? OFFSET ?",
            (*where.params, query.limit, query.offset),
        )

    def count(self, scope: Scope, filters: Filters) -> int:
        where = memory_where(self.dialect, scope, filters)
        return int(self._rows(f"SELECT COUNT(*) FROM memories m WHERE {where.sql()}", where.params)[0][0])

    def scan_memories(self, filters: Filters, after: int, limit: int) -> list[tuple[int, MemoryItem]]:
        where = memory_where(self.dialect, None, filters)
        found = self._rows(
            f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > ? AND {where.sql()} ORDER BY m.seq LIMIT ?",
            (after, *where.params, limit),
        )
        return [(row[0], rows.memory(self.dialect, tuple(row)[1:])) for row in found]

    def find_by_key(self, scope: Scope, key: str, *, exact: bool = False) -> MemoryItem | None:
        where = scope_where(self.dialect, scope, "k", exact=exact)
        _, user, agent, session = rows.scope_columns(scope)
        found = self._memories(  # the scope's own value first: a session's value of the key is not its user's
            f"SELECT {MEMORY_COLUMNS} FROM kv_facts k JOIN memories m ON m.id = k.memory_id "
            f"WHERE k.key = ? AND {where.sql()} ORDER BY CASE WHEN k.user_id = ? AND k.agent_id = ? "
            "AND k.session_id = ? THEN 0 ELSE 1 END, m.updated_at DESC LIMIT 1",
            (key, *where.params, user, agent, session),
        )
        return found[0] if found else None

    def find_by_hash(
        self, scope: Scope, content_hash: str, statuses: Sequence[MemoryStatus] = (MemoryStatus.ACTIVE,)
    ) -> list[MemoryItem]:
        # by_key: planned on the hash index, not the scope's (SQLite's planner, without statistics, preferred the
        # scope index and scanned the whole scope for every text add() checked: quadratic in a large import)
        where = scope_where(self.dialect, scope, by_key=True)
        status, params = self.dialect.in_("m.status", [MemoryStatus(s).value for s in statuses])
        return self._memories(
            f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.content_hash = ? AND {status} "
            f"AND {where.sql()} ORDER BY m.seq",
            (content_hash, *params, *where.params),
        )

    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        unique = [token for token in dict.fromkeys(tokens) if token]
        if not unique:
            return []
        return self.dialect.keyword_search(scope, unique, filters, limit)

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
        return self.dialect.vector_search(scope, vector, filters, limit)

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEvent]:
        where = scope_where(self.dialect, scope, "h")
        found = self._rows(
            f"SELECT {HISTORY_COLUMNS} FROM history h WHERE (h.memory_id = ? "
            f"OR {self.dialect.json_text('h.details', 'supersedes')} = ?) AND {where.sql()} ORDER BY h.seq",
            (memory_id, memory_id, *where.params),
        )
        return [rows.history(self.dialect, row) for row in found]

    def messages(self, scope: Scope, limit: int = 1000, *, latest: bool = False) -> list[StoredMessage]:
        return self._messages(scope, None, limit, latest=latest)

    def messages_by_id(self, scope: Scope, message_ids: Sequence[str]) -> list[StoredMessage]:
        return self._messages(scope, message_ids, len(message_ids)) if message_ids else []

    def messages_said_at(self, scope: Scope, timestamps: Sequence[datetime]) -> list[StoredMessage]:
        if not timestamps:
            return []
        where = scope_where(self.dialect, scope, "t", exact=True)
        where.add_sql(self.dialect.in_("t.timestamp", [self.dialect.ts(t) for t in timestamps]))
        found = self._rows(f"SELECT {MESSAGE_COLUMNS} FROM messages t WHERE {where.sql()} ORDER BY t.seq", where.params)
        return [rows.message(self.dialect, row) for row in found]

    def _messages(
        self, scope: Scope, message_ids: Sequence[str] | None, limit: int, *, latest: bool = False
    ) -> list[StoredMessage]:
        where = scope_where(self.dialect, scope, "t")
        if message_ids is not None:
            where.add_sql(self.dialect.in_("t.id", list(message_ids)))
        order = "t.timestamp DESC, t.seq DESC" if latest else "t.timestamp, t.seq"
        found = self._rows(
            f"SELECT {MESSAGE_COLUMNS} FROM messages t WHERE {where.sql()} ORDER BY {order} LIMIT ?",
            (*where.params, limit),
        )
        turns = [rows.message(self.dialect, row) for row in found]
        return turns[::-1] if latest else turns

    # --- graph --------------------------------------------------------------------------
    def graph_entities(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> list[Entity]:
        return self.dialect.read(lambda tx: graph.select_entities(self.dialect, tx, scope, entity_ids))

    def entity_vectors(self, scope: Scope, embedding_id: str) -> dict[str, Vector]:
        where = scope_where(self.dialect, scope, "e")
        where.add("e.merged_into IS NULL AND e.embedding_id = ? AND e.vector IS NOT NULL", embedding_id)
        found = self._rows(f"SELECT e.id, e.vector FROM entities e WHERE {where.sql()} ORDER BY e.seq", where.params)
        return {entity_id: _from_bytes(blob) for entity_id, blob in found}

    def graph_relations(
        self,
        scope: Scope,
        *,
        entity_ids: Sequence[str] | None = None,
        relation_ids: Sequence[str] | None = None,
        include_closed: bool = False,
    ) -> list[Relation]:
        return self.dialect.read(
            lambda tx: graph.select_relations(self.dialect, tx, scope, entity_ids, relation_ids, include_closed)
        )

    def graph_walk(
        self, scope: Scope, start_ids: Sequence[str], hops: int, *, include_closed: bool = False
    ) -> list[tuple[Relation, int]]:
        if not start_ids or hops < 1:
            return []
        return self.dialect.read(lambda tx: graph.walk(self.dialect, tx, scope, start_ids, hops, include_closed))

    # --- jobs ---------------------------------------------------------------------------
    def claim_jobs(self, now: datetime, lease_until: datetime, limit: int) -> list[Job]:
        claimable = "(status = 'queued' OR (status = 'running' AND lease_until < ?))"
        moment = self.dialect.ts(now)

        def run(tx: Tx) -> list[Job]:
            self.dialect.lock_claims(tx)
            first = tx.execute(
                f"SELECT tenant_id, user_id, agent_id, session_id FROM jobs WHERE {claimable} ORDER BY seq LIMIT 1",
                (moment,),
            ).fetchone()
            if first is None:
                return []
            # Jobs of one scope are claimed together so their turns share one model call.
            claimed = tx.execute(
                "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, updated_at = ? "
                f"WHERE seq IN (SELECT seq FROM jobs WHERE {claimable} AND tenant_id = ? AND user_id = ? "
                f"AND agent_id = ? AND session_id = ? ORDER BY seq LIMIT ?) RETURNING {JOB_COLUMNS}",
                (self.dialect.ts(lease_until), moment, moment, *first, limit),
            ).fetchall()
            return sorted((rows.job(self.dialect, row) for row in claimed), key=lambda job: job.created_at)

        return self.dialect.transaction(run)

    def list_jobs(self, scope: AdminScope | None, statuses: Sequence[JobStatus], limit: int) -> list[Job]:
        where = scope_where(self.dialect, scope, "j")
        if statuses:
            where.add_sql(self.dialect.in_("j.status", [status.value for status in statuses]))
        found = self._rows(
            f"SELECT {JOB_COLUMNS} FROM jobs j WHERE {where.sql()} ORDER BY j.seq LIMIT ?", (*where.params, limit)
        )
        return [rows.job(self.dialect, row) for row in found]

    # --- embeddings ---------------------------------------------------------------------
    def embedding_id(self) -> str | None:
        found = self._rows("SELECT value FROM meta WHERE key = 'embedding_id'")
        return str(found[0][0]) if found else None

    def set_embedding_id(self, embedding_id: str) -> None:
        def run(tx: Tx) -> None:
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('embedding_id', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (embedding_id,),
            )
            self.dialect.on_embedding_id(tx, embedding_id)

        self.dialect.transaction(run)

    def cached_vectors(self, embedding_id: str, text_hashes: Sequence[str]) -> dict[str, Vector]:
        if not text_hashes:
            return {}
        d = self.dialect
        condition, params = d.in_("text_hash", list(dict.fromkeys(text_hashes)))
        held = self._rows(  # vectors of memories double as the cache of their texts (one copy on disk)
            f"SELECT text_hash, {d.vector_column} FROM memory_vectors WHERE {condition} AND embedding_id = ?",
            (*params, embedding_id),
        )
        found = {digest: d.from_vector(vector).astype(np.float32, copy=False) for digest, vector in held}
        missing = [digest for digest in dict.fromkeys(text_hashes) if digest not in found]
        if missing:
            condition, params = d.in_("text_hash", missing)
            rest = self._rows(
                f"SELECT text_hash, vector FROM embedding_cache WHERE embedding_id = ? AND {condition}",
                (embedding_id, *params),
            )
            found.update((digest, _from_bytes(blob)) for digest, blob in rest)
        return found

    def memories_needing_vectors(self, embedding_id: str, batch_size: int) -> Iterator[list[MemoryItem]]:
        sql = (
            f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > ? AND NOT EXISTS "
            "(SELECT 1 FROM memory_vectors v WHERE v.memory_seq = m.seq AND v.embedding_id = ?) "
            "ORDER BY m.seq LIMIT ?"
        )
        last_seq = 0
        while found := self._rows(sql, (last_seq, embedding_id, batch_size)):
            last_seq = found[-1][0]
            yield [rows.memory(self.dialect, tuple(row)[1:]) for row in found]

    # --- the keyword index --------------------------------------------------------------
    @property
    def _terms_version(self) -> str:
        # the keyword terms and the stored readings (stored_words.py) are derived from the same word tables
        return f"{self.dialect.terms_version}/{STORED_WORDS_VERSION}"

    def keyword_index_current(self) -> bool:
        found = self._rows("SELECT value FROM meta WHERE key = 'search_terms'")
        return bool(found) and str(found[0][0]) == self._terms_version

    def rebuild_keyword_index(self, batch_size: int = 2000) -> Iterator[int]:
        """Every memory's keyword terms and stored readings derived again, a batch per transaction, then the
        version recorded: an interrupted rebuild is simply run again (rows written meanwhile are current)."""
        d = self.dialect
        sql = f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > ? ORDER BY m.seq LIMIT ?"
        last_seq = 0
        while found := self._rows(sql, (last_seq, batch_size)):
            last_seq = found[-1][0]
            items = [rows.memory(d, tuple(row)[1:]) for row in found]
            d.transaction(partial(_derive_again, d, items))
            yield len(items)
        d.transaction(
            lambda tx: tx.execute(
                "INSERT INTO meta (key, value) VALUES ('search_terms', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (self._terms_version,),
            )
        )

    def _keep_keyword_index_current(self) -> None:
        """On open: a keyword index built by an earlier tokenizer is rebuilt when small enough to do it now;
        a large one is left to ``memstrata reindex`` (searches still work meanwhile, with the old terms)."""
        if self.keyword_index_current():
            return
        count = int(self._rows("SELECT COUNT(*) FROM memories")[0][0])
        if count > AUTO_KEYWORD_REBUILD_ROWS:
            log.warning(
                "the keyword index of %s holds terms of an earlier memstrata (%d memories): run `memstrata reindex` "
                "to rebuild it",
                self.location,
                count,
            )
            return
        began = time.perf_counter()
        for _ in self.rebuild_keyword_index():
            pass
        if count:
            log.info("rebuilt the keyword index of %d memories in %.1f s", count, time.perf_counter() - began)

    # --- whole-store --------------------------------------------------------------------
    def _pages(self, sql: str, params: Sequence[Any] = (), *, size: int = 5000) -> Iterator[tuple[Any, ...]]:
        """Rows of ``SELECT seq, ... WHERE seq > ? ... ORDER BY seq LIMIT ?``, page by page, without the seq."""
        last = 0
        while found := self._rows(sql, (*params, last, size)):
            last = found[-1][0]
            yield from (tuple(row)[1:] for row in found)

    def export_all(self) -> Iterator[tuple[str, object]]:
        """Every record, in an order import can replay: memories, vectors, history, messages, entities, relations,
        then process records (tasks, steps, hypotheses, artifacts, strategies), then knowledge sources."""
        d = self.dialect
        for row in self._pages(
            f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE m.seq > ? ORDER BY m.seq LIMIT ?"
        ):
            yield "memory", rows.memory(d, row)
        embedding_id = self.embedding_id()
        if embedding_id:
            for memory_id, vector in self._pages(
                f"SELECT v.memory_seq, m.id, v.{d.vector_column} FROM memory_vectors v JOIN memories m "
                "ON m.seq = v.memory_seq WHERE v.embedding_id = ? AND v.memory_seq > ? ORDER BY v.memory_seq LIMIT ?",
                (embedding_id,),
            ):
                yield "vector", (memory_id, embedding_id, d.from_vector(vector))
        for kind, table, columns, decode in (
            ("history", "history", HISTORY_COLUMNS, rows.history),
            ("message", "messages", MESSAGE_COLUMNS, rows.message),
            ("entity", "entities", ENTITY_COLUMNS, rows.entity),
            ("relation", "relations", RELATION_COLUMNS, rows.relation),
        ):
            for row in self._pages(f"SELECT seq, {columns} FROM {table} WHERE seq > ? ORDER BY seq LIMIT ?"):
                yield kind, decode(d, row)
        for record, process_table, process_columns, read_row in PROCESS_TABLES:
            sql = f"SELECT seq, {process_columns} FROM {process_table} WHERE seq > ? ORDER BY seq LIMIT ?"
            yield from ((record, read_row(d, row)) for row in self._pages(sql))
        sql = f"SELECT seq, {SOURCE_COLUMNS} FROM knowledge_sources WHERE seq > ? ORDER BY seq LIMIT ?"
        yield from (("knowledge_source", source_row(d, row)) for row in self._pages(sql, size=100))

    def stats(self, scope: AdminScope | None = None) -> StoreStats:
        where = scope_where(self.dialect, scope, "m")

        def select(sql: str) -> list[Any]:
            return self._rows(sql.format(where=where.sql()), where.params * sql.count("{where}"))

        counts = select(
            "SELECT (SELECT COUNT(*) FROM messages m WHERE {where}), (SELECT COUNT(*) FROM history m WHERE {where}), "
            "(SELECT COUNT(*) FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq WHERE {where}), "
            "(SELECT COUNT(*) FROM entities m WHERE {where}), COUNT(*), COUNT(m.valid_to) "
            "FROM relations m WHERE {where}"
        )
        messages, history, vectors, entities, relations, closed = (int(count) for count in counts[0])
        return StoreStats(
            memories_by_status=dict(select("SELECT status, COUNT(*) FROM memories m WHERE {where} GROUP BY status")),
            memories_by_kind=dict(select("SELECT kind, COUNT(*) FROM memories m WHERE {where} GROUP BY kind")),
            messages=messages,
            history_events=history,
            vectors=vectors,
            embedding_id=self.embedding_id(),
            schema_version=self.schema_version,
            location=self.location,
            size_bytes=self.dialect.read(self.dialect.size_bytes),
            extra={"entities": entities, "relations": relations, "closed_relations": closed}
            | self._process.counts(scope),
        )


def _from_bytes(blob: Any) -> Vector:
    return np.frombuffer(bytes(blob), dtype="<f4").astype(np.float32)


def _derive_again(d: Dialect, items: Sequence[MemoryItem], tx: Tx) -> None:
    """The keyword terms and stored readings of stored memories, from this version's word tables. The row's
    change counter stays, so no vector index re-reads these rows."""
    d.reindex_keywords(tx, items)
    tx.executemany("UPDATE memories SET words = ? WHERE id = ?", [(stored_words(item.text), item.id) for item in items])
