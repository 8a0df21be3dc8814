"""The PostgreSQL schema: the shared steps of ``storage/sql/ddl.py`` in PostgreSQL's words, plus what only
PostgreSQL has (pgvector, tsvector keyword tokens, GIN indexes).

All pending steps run in one transaction under an advisory lock (see ``connection.migrate``), so several
processes opening a fresh database at once queue up: the first migrates, the others find nothing to do.

The HNSW index is not a migration: its vector dimension is known only when the first vector of
an embedding model arrives, so :func:`ensure_vector_index` creates one partial index per
dimension then (vectors are derived state, rebuilt by ``memstrata reindex``).
"""

from __future__ import annotations

from memstrata.storage.sql import ddl
from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.schema import LATEST_VERSION, numbered

__all__ = ["LATEST_VERSION", "LEDGER", "MIGRATIONS", "ensure_vector_index", "vector_expression"]

MIGRATION_LOCK = 0x6D656D7374726174  # "memstrat": pg_advisory_xact_lock key for migrations
INDEX_LOCK = MIGRATION_LOCK + 1  # creating a vector index for a new dimension
HNSW_MAX_DIMS = 2000  # pgvector indexes vector up to 2,000 dims and halfvec up to 4,000
HALFVEC_MAX_DIMS = 4000

LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations "
    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
)

WORDS = {
    "pk": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    "json": "JSONB",
    "ts": "TIMESTAMPTZ",
    "real": "DOUBLE PRECISION",
    "bool": "BOOLEAN",
    "false": "FALSE",
    "bigint": "BIGINT",
    "blob": "BYTEA",  # float32, little-endian
    # pre-segmented keyword tokens, the same ones SQLite's FTS5 gets
    "memories_columns": "tokens TSVECTOR NOT NULL DEFAULT ''",
    # room on each page, so access-count updates stay HOT (no index churn)
    "memories_options": " WITH (fillfactor = 90)",
    "cache_options": "",
}

OWN = {
    1: """
CREATE EXTENSION IF NOT EXISTS vector;

-- fastupdate off: a growing GIN pending list is scanned by every search (8x slower keyword search at
-- 10k memories until autovacuum flushes it); inserting into the tree directly costs writes little.
CREATE INDEX memories_tokens ON memories USING GIN (tokens) WITH (fastupdate = off);
CREATE INDEX memories_metadata ON memories USING GIN (metadata jsonb_path_ops) WITH (fastupdate = off);
CREATE INDEX history_supersedes ON history ((details ->> 'supersedes'));
CREATE INDEX kv_facts_memory ON kv_facts (memory_id);

-- One vector per memory; dims vary by model, so the column is untyped and each dimension gets
-- its own partial HNSW expression index (see ensure_vector_index).
CREATE TABLE memory_vectors (
    memory_seq BIGINT PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    embedding_id TEXT NOT NULL,
    embedding vector NOT NULL
);
-- Keep vectors in the row (out of line only when too big for a page): an exact scan then reads
-- no TOAST, about 8x faster at 512 dims.
ALTER TABLE memory_vectors ALTER COLUMN embedding SET STORAGE MAIN;
""",
}

MIGRATIONS = numbered(ddl.render(WORDS, OWN))


def vector_expression(dims: int, column: str = "embedding") -> str | None:
    """The indexed expression for vectors of ``dims`` dimensions, or None above pgvector's limits."""
    if dims <= HNSW_MAX_DIMS:
        return f"({column}::vector({dims}))"
    if dims <= HALFVEC_MAX_DIMS:
        return f"({column}::halfvec({dims}))"
    return None


def ensure_vector_index(tx: Tx, dims: int) -> None:
    """Create the HNSW (cosine) index for vectors of ``dims`` dimensions, inside the caller's transaction."""
    expression = vector_expression(int(dims))
    if expression is None:
        return  # above 4,000 dims pgvector has no index; search stays exact
    name = f"memory_vectors_hnsw_{int(dims)}"
    exists = tx.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()
    if exists and exists[0]:
        return
    ops = "vector_cosine_ops" if int(dims) <= HNSW_MAX_DIMS else "halfvec_cosine_ops"
    tx.execute("SELECT pg_advisory_xact_lock(?)", (INDEX_LOCK,))  # two first writers must not race
    tx.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON memory_vectors USING hnsw ({expression} {ops}) "
        f"WHERE vector_dims(embedding) = {int(dims)}"
    )
