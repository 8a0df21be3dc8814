"""The PostgreSQL dialect: a connection pool shared by concurrent writers under row locks, keyword search
on a tsvector of the same pre-segmented tokens FTS5 gets, pgvector with an HNSW index per dimension, JSONB."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
from psycopg.types.json import Jsonb

from memstrata.indexing import keyword_text
from memstrata.lexical import SEARCH_TERMS_VERSION, fts_terms, index_document
from memstrata.query import Filters
from memstrata.storage.postgres.connection import (
    Session,
    connect,
    masked,
    migrate,
    open_pool,
    retrying,
    translated,
    vector_oid,
)
from memstrata.storage.postgres.replica import SearchRoute, refuse_standby
from memstrata.storage.postgres.schema_migrations import HNSW_MAX_DIMS, ensure_vector_index, vector_expression
from memstrata.storage.protocol import ScoredId, Vector
from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.where import memory_where
from memstrata.storage.sql.writes import embedding_dims
from memstrata.types import MemoryItem, Scope, as_utc

T = TypeVar("T")
CLAIM_LOCK = 0x6D656D7374726174 + 2  # one claimer at a time, so a scope's queued jobs go to one worker
TABLES = ("memories", "memory_vectors", "messages", "history", "kv_facts", "embedding_cache", "jobs", "meta",
          "entities", "relations", "process_tasks", "process_steps", "process_hypotheses", "process_artifacts",
          "process_strategies", "knowledge_sources")  # fmt: skip
# Where user text lives, for find_traces: (table, columns as text).
_TEXT_COLUMNS = {
    "memories": ("text", "key", "metadata::text"), "messages": ("content", "name"),
    "history": ("old_text", "new_text", "reason", "details::text"),
    "jobs": ("error", "raw_output", "result::text"), "entities": ("name", "aliases::text", "metadata::text"),
    "relations": ("relation", "metadata::text"), "kv_facts": ("key",),
    "process_tasks": ("goal", "context", "constraints::text", "outcome", "summary", "metadata::text"),
    "process_steps": ("input", "output", "reasoning", "tags::text"), "process_hypotheses": ("text",),
    "process_artifacts": ("name", "text", "uri", "metadata::text"),
    "process_strategies": ("trigger_condition::text", "steps::text", "expected_outcome", "counter_examples::text"),
    "knowledge_sources": ("source", "markdown", "title", "notes::text", "metadata::text"),
}  # fmt: skip
_MAX_LEXEME_BYTES = 2046  # PostgreSQL's limit for one tsvector lexeme
_MAX_POSITION = 16383
_MAX_POSITIONS = 256


def _store_id(conn: Any) -> str:
    """This store's id, made on first open: a read replica must hold the same (``replica.check_copy``)."""
    found = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
    if found is None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('store_id', %s) ON CONFLICT (key) DO NOTHING",
                     (uuid.uuid4().hex,))  # fmt: skip
        found = conn.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()
    return str(found[0])


def no_nul(value: str | None) -> str | None:
    """Model output may hold NUL, which PostgreSQL text cannot; keep everything else verbatim."""
    return None if value is None else value.replace("\x00", "\ufffd")


def scrubbed(value: Any) -> Any:
    """A JSON value with NUL removed from every string (JSONB cannot hold \\u0000)."""
    if isinstance(value, str):
        return no_nul(value)
    if isinstance(value, dict):
        return {no_nul(str(key)): scrubbed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(item) for item in value]
    return value


def quote_lexeme(token: str) -> str:
    """A lexeme quoted for tsvector/tsquery input: user text is always a literal, never syntax."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def keyword_terms(tokens: Sequence[str]) -> list[tuple[str, ...]]:
    """Each pre-segmented token as the terms SQLite's FTS5 makes of it (porter stemming, case and diacritics
    folded), so both backends match "weekends" to "weekend" alike: PostgreSQL's own stemmers are per language
    and would cut Chinese, so the terms are made here and stored as they are."""
    return fts_terms(tokens)


def tsvector_literal(document: str) -> str:
    """The tsvector of a pre-segmented token string, term for term (FTS5's terms, no second tokenizer). Positions
    are kept so ts_rank_cd can rank; terms PostgreSQL cannot hold (over 2 KB) are skipped."""
    positions: dict[str, list[int]] = {}
    terms = [term for token_terms in keyword_terms(document.split()) for term in token_terms]
    for position, term in enumerate(terms, start=1):  # a position per term, so a token's terms stay a phrase
        if len(term.encode("utf-8")) <= _MAX_LEXEME_BYTES:
            spots = positions.setdefault(term, [])
            if len(spots) < _MAX_POSITIONS:
                spots.append(min(position, _MAX_POSITION))
    return " ".join(f"{quote_lexeme(token)}:{','.join(map(str, spots))}" for token, spots in positions.items())


class PostgresDialect:
    terms_version = f"{SEARCH_TERMS_VERSION}+fts5-terms"  # tokens stored as FTS5's terms (before: as they were)
    vector_column = "embedding"
    by_key = ""
    for_update = " FOR UPDATE"
    skip_locked = " FOR UPDATE SKIP LOCKED"
    memory_extras: tuple[tuple[str, str], ...] = (
        ("tokens", "?::tsvector"),
    )  # keyword tokens live in the memory's own row
    touch = ""

    def __init__(self, url: str, *, pool_size: int, timeout_s: float, read_url: str | None = None) -> None:
        self.location = masked(url)
        with translated(self.location), connect(url, timeout_s=timeout_s) as conn:
            refuse_standby(conn, self.location)
            self.schema_version = migrate(conn, self)
            store_id = _store_id(conn)
            oid = vector_oid(conn)
            embedding = conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
            if embedding is not None:
                with conn.transaction():
                    ensure_vector_index(Session(conn), embedding_dims(str(embedding[0])))
        self._pool = open_pool(url, oid=oid, size=pool_size, timeout_s=timeout_s)
        try:
            self._search = SearchRoute.open(self._pool, read_url, store_id=store_id, schema_version=self.schema_version,
                                            size=pool_size, timeout_s=timeout_s)  # fmt: skip
        except BaseException:
            self._pool.close()
            raise
        self.replica_location = self._search.replica_location

    # --- connections ---------------------------------------------------------------------------
    def read(self, action: Callable[[Tx], T]) -> T:
        """Reads on a pooled autocommit connection."""
        with translated(self.location), self._pool.connection() as conn:
            return action(Session(conn))

    def transaction(self, action: Callable[[Tx], T]) -> T:
        """``action`` in one transaction, run again if PostgreSQL aborts it to break a deadlock."""

        def attempt() -> T:
            with self._pool.connection() as conn, conn.transaction():
                return action(Session(conn))

        with translated(self.location):
            return retrying(attempt)

    def close(self) -> None:
        self._search.close()
        self._pool.close()

    def replica_lag_ms(self) -> int | None:
        return self._search.lag_ms()

    # --- values: psycopg adapts datetimes; JSON goes as JSONB ------------------------------------
    def ts(self, moment: datetime | None) -> datetime | None:
        return moment

    def time(self, value: Any) -> datetime | None:
        return None if value is None else as_utc(value)

    def json(self, value: Any) -> Jsonb:
        return Jsonb(value)

    def model_json(self, value: Any) -> Jsonb:
        return Jsonb(scrubbed(value))

    def model_text(self, value: str | None) -> str | None:
        return no_nul(value)

    def from_json(self, value: Any) -> Any:
        return value

    def vector(self, vector: Vector) -> Vector:
        return np.asarray(vector, dtype=np.float32)

    def from_vector(self, value: Any) -> Vector:
        return np.asarray(value, dtype=np.float32)

    def memory_extra_params(self, item: MemoryItem) -> tuple[Any, ...]:
        return (tsvector_literal(index_document(keyword_text(item))),)

    # --- SQL pieces --------------------------------------------------------------------------
    def in_(self, column: str, values: Sequence[Any], *, negate: bool = False) -> tuple[str, list[Any]]:
        return (f"{column} <> ALL(?)" if negate else f"{column} = ANY(?)"), [list(values)]

    def json_text(self, column: str, key: str) -> str:
        return f"{column} ->> '{key}'"

    def metadata_is(self, column: str, name: str, value: Any) -> tuple[str, list[Any]]:
        if value is None:  # like SQLite's json_extract(...) IS NULL: a missing key or a JSON null
            return f"COALESCE({column} -> ?, 'null'::jsonb) = 'null'::jsonb", [name]
        return f"{column} @> ?", [Jsonb({name: value})]  # containment uses the GIN index on metadata

    # --- bookkeeping ------------------------------------------------------------------------------
    def begin_batch(self, tx: Tx) -> None:
        return None

    def index_memories(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        return None  # the tokens column is written with the row

    def reindex_keywords(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        tx.executemany("UPDATE memories SET tokens = ?::tsvector WHERE id = ?",
                       [(*self.memory_extra_params(item), item.id) for item in items])  # fmt: skip

    def drop_memories(self, tx: Tx, seqs: Sequence[int] | None) -> dict[str, int]:
        return {}  # vectors cascade, tokens go with the row

    def lock_claims(self, tx: Tx) -> None:
        tx.execute("SELECT pg_advisory_xact_lock(?)", (CLAIM_LOCK,))

    def snapshot(self, tx: Tx) -> None:
        # READ COMMITTED gives each statement a new snapshot: an erase that selected a user's memories and then
        # deleted history and turns by scope took the history and turns of memories committed in between, which
        # stayed behind without them. A write this snapshot conflicts with aborts it, and transaction() retries.
        tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")

    def on_embedding_id(self, tx: Tx, embedding_id: str) -> None:
        ensure_vector_index(tx, embedding_dims(embedding_id))

    def scrub(self) -> None:
        """Deleted rows stay in their table files as dead tuples until VACUUM reclaims the space and new rows
        overwrite it; ``compact`` (VACUUM FULL) rewrites the tables without them."""
        return None

    def compact(self) -> None:
        self.read(lambda tx: tx.execute(f"VACUUM (FULL, ANALYZE) {', '.join(TABLES)}"))

    def before_copy(self, tx: Tx) -> None:
        """Into an empty table, vectors are copied without their HNSW index: one build at the end is about
        10x faster than inserting every vector into the graph."""
        if tx.execute("SELECT EXISTS (SELECT 1 FROM memory_vectors)").fetchone()[0]:
            return
        for (name,) in tx.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors' AND starts_with(indexname, ?) "
            "AND schemaname = current_schema()",
            ("memory_vectors_hnsw_",),
        ).fetchall():
            tx.execute(f'DROP INDEX IF EXISTS "{name}"')

    def after_copy(self, tx: Tx) -> None:
        row = tx.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
        if row is not None:
            tx.execute("SET LOCAL maintenance_work_mem = '256MB'")
            ensure_vector_index(tx, embedding_dims(str(row[0])))

    # --- search and whole-store -----------------------------------------------------------------
    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        """Memories holding any of the tokens, ranked by cover density (higher is better): each token quoted
        into the tsquery, OR-ed like the FTS5 MATCH. Normalisation 1 divides by 1 + log(length), like BM25."""
        # a token of several terms is a phrase of them, as in the FTS5 MATCH
        phrases = [" <-> ".join(map(quote_lexeme, terms)) for terms in keyword_terms(tokens)
                   if terms and all(len(term.encode("utf-8")) <= _MAX_LEXEME_BYTES for term in terms)]  # fmt: skip
        query = " | ".join(f"({phrase})" if " " in phrase else phrase for phrase in phrases)
        if not query:
            return []
        where = memory_where(self, scope, filters)
        sql = (
            "SELECT m.id, ts_rank_cd(m.tokens, ?::tsquery, 1) AS rank FROM memories m "
            f"WHERE m.tokens @@ ?::tsquery AND {where.sql()} ORDER BY rank DESC, m.seq LIMIT ?"
        )
        with translated(self.location):
            found, replica = self._search.run(
                lambda conn: Session(conn).execute(sql, (query, query, *where.params, limit)).fetchall()
            )
        hits = [ScoredId(memory_id, float(rank)) for memory_id, rank in found]
        return self._still_matching(scope, filters, hits) if replica else hits

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
        """Top ``limit`` memories by cosine similarity (1 - cosine distance) among vectors of the store's
        current model. The first query lets the planner use the HNSW index (iterative scans keep going until
        enough rows pass the scope filter); if it still returns fewer than ``limit`` rows, an exact scan of
        the scope answers, so a small or very selective scope never loses results to the graph walk."""
        query = np.ascontiguousarray(vector, dtype=np.float32)
        dims = int(query.shape[0])
        if limit <= 0 or dims == 0:
            return []
        where = memory_where(self, scope, filters)
        source = (
            "FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq "
            "WHERE v.embedding_id = (SELECT value FROM meta WHERE key = 'embedding_id') "
            f"AND vector_dims(v.embedding) = {dims} AND {where.sql()}"
        )
        expression = vector_expression(dims, "v.embedding")
        kind = "vector" if dims <= HNSW_MAX_DIMS else "halfvec"
        # A cached generic plan would ignore how selective this scope is: prepare=False. The bare column
        # matches no index expression, so the second query is an exact scan of the filtered rows.
        indexed = f"{expression} <=> ?::{kind}({dims})" if expression else None

        def nearest(conn: Any) -> list[Any]:
            found: list[Any] = []
            for distance in (indexed, "v.embedding <=> ?"):
                if distance is not None and len(found) < limit:
                    found = Session(conn).execute(
                        f"SELECT m.id, {distance} AS distance {source} ORDER BY distance LIMIT ?",
                        (query, *where.params, limit), prepare=False,
                    ).fetchall()  # fmt: skip
            return found

        with translated(self.location):
            found, replica = self._search.run(nearest)
        scored = [ScoredId(memory_id, 1.0 - float(distance)) for memory_id, distance in found]
        scored = self._still_matching(scope, filters, scored) if replica else scored
        return sorted(scored, key=lambda hit: -hit.score)  # relaxed_order scans may be slightly out of order

    def _still_matching(self, scope: Scope, filters: Filters, hits: list[ScoredId]) -> list[ScoredId]:
        """Candidates a replica found, less those whose row on the primary no longer passes the search's scope
        and filters (deleted, superseded, changed since the replica last replayed): one lookup by id."""
        if not hits:
            return hits
        where = memory_where(self, scope, filters, by_key=True)
        condition, params = self.in_("m.id", [hit.memory_id for hit in hits])
        sql = f"SELECT m.id FROM memories m WHERE {condition} AND {where.sql()}"
        kept = {
            memory_id for (memory_id,) in self.read(lambda tx: tx.execute(sql, (*params, *where.params)).fetchall())
        }
        return [hit for hit in hits if hit.memory_id in kept]

    def size_bytes(self, tx: Tx) -> int | None:
        row = tx.execute("SELECT SUM(pg_total_relation_size(to_regclass(t))) FROM unnest(?::text[]) t",
                         (list(TABLES),)).fetchone()  # fmt: skip
        return int(row[0]) if row and row[0] is not None else 0

    def find_traces(self, needles: Sequence[str]) -> dict[str, list[str]]:
        """Live rows only: a deleted row's bytes stay in its table file until ``compact`` rewrites it."""
        places: dict[str, list[str]] = {}
        queries = {
            table: f"SELECT n FROM unnest(?::text[]) n WHERE EXISTS (SELECT 1 FROM {table} WHERE "
            + " OR ".join(f"strpos({column}, n) > 0" for column in columns)
            + ")"
            for table, columns in _TEXT_COLUMNS.items()
        }
        found = self.read(
            lambda tx: {table: tx.execute(sql, (list(needles),)).fetchall() for table, sql in queries.items()}
        )
        for table, needles_found in found.items():
            for (needle,) in needles_found:
                places.setdefault(needle, []).append(f"{table} (live rows)")
        return places
