"""The PostgreSQL schema, step by step (numbers and names in ``storage/sql/schema.py``).

Append new steps; never edit one that has shipped: databases created by it must keep opening. All
pending steps run in one transaction under an advisory lock (see ``connection.migrate``), so several
processes opening a fresh database at once queue up: the first migrates, the others find nothing to do.

The HNSW index is not a migration: its vector dimension is known only when the first vector of
an embedding model arrives, so :func:`ensure_vector_index` creates one partial index per
dimension then (vectors are derived state, rebuilt by ``memstrata reindex``).
"""

from __future__ import annotations

from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.schema import LATEST_VERSION, numbered

__all__ = ["LATEST_VERSION", "LEDGER", "MIGRATIONS", "ensure_vector_index", "vector_expression"]

MIGRATION_LOCK = 0x6D656D7374726174  # "memstrat": pg_advisory_xact_lock key for migrations
INDEX_LOCK = MIGRATION_LOCK + 1  # creating a vector index for a new dimension
HNSW_MAX_DIMS = 2000  # pgvector indexes vector up to 2,000 dims and halfvec up to 4,000
HALFVEC_MAX_DIMS = 4000

_001_INITIAL = """
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- Scope columns hold '' when a field is absent so equality and indexes stay simple.
-- fillfactor leaves room on each page so access-count updates stay HOT (no index churn).
CREATE TABLE memories (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    key TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    confidence DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    event_time TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    valid_from TIMESTAMPTZ NOT NULL,
    valid_to TIMESTAMPTZ,
    last_accessed_at TIMESTAMPTZ,
    access_count INTEGER NOT NULL DEFAULT 0,
    provenance JSONB NOT NULL,
    embedding_id TEXT,
    content_hash TEXT NOT NULL,
    tokens TSVECTOR NOT NULL DEFAULT ''  -- pre-segmented keyword tokens, the same ones SQLite's FTS5 gets
) WITH (fillfactor = 90);
CREATE INDEX memories_user ON memories (tenant_id, user_id, status, kind);
CREATE INDEX memories_agent ON memories (tenant_id, agent_id, status);
CREATE INDEX memories_session ON memories (tenant_id, session_id, status);
CREATE INDEX memories_hash ON memories (content_hash);
-- fastupdate off: a growing GIN pending list is scanned by every search (8x slower keyword search at
-- 10k memories until autovacuum flushes it); inserting into the tree directly costs writes little.
CREATE INDEX memories_tokens ON memories USING GIN (tokens) WITH (fastupdate = off);
CREATE INDEX memories_metadata ON memories USING GIN (metadata jsonb_path_ops) WITH (fastupdate = off);

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

CREATE TABLE messages (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL,
    name TEXT,
    content TEXT NOT NULL,
    timestamp TIMESTAMPTZ NOT NULL,
    stored_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX messages_scope ON messages (tenant_id, user_id, agent_id, session_id, timestamp);

CREATE TABLE history (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    memory_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL,
    old_text TEXT,
    new_text TEXT,
    actor TEXT NOT NULL,
    reason TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    details JSONB NOT NULL DEFAULT '{}'
);
CREATE INDEX history_memory ON history (memory_id, seq);
CREATE INDEX history_supersedes ON history ((details ->> 'supersedes'));

-- The current memory behind each namespaced key, one per exact scope.
CREATE TABLE kv_facts (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    PRIMARY KEY (key, tenant_id, user_id, agent_id, session_id)
);
CREATE INDEX kv_facts_memory ON kv_facts (memory_id);

CREATE TABLE embedding_cache (
    embedding_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BYTEA NOT NULL,  -- float32, little-endian: a cache, never searched
    PRIMARY KEY (embedding_id, text_hash)
);
"""

_002_JOBS = """
-- The durable queue of the LLM write path. A job survives a crash: a running job whose lease
-- expired is claimed again, and its decisions are applied in the same transaction that marks
-- it done, so nothing is applied twice.
CREATE TABLE jobs (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    message_ids JSONB NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_until TIMESTAMPTZ,
    error TEXT,
    raw_output TEXT,
    result JSONB,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX jobs_status ON jobs (status, seq);
CREATE INDEX jobs_scope ON jobs (tenant_id, user_id, agent_id, session_id, status);
"""

_003_GRAPH = """
-- Graph memory. Entities and relations carry scope columns like memories; relations are closed
-- (valid_to) when they stop being true, never deleted.
CREATE TABLE entities (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    aliases JSONB NOT NULL DEFAULT '[]',
    message_ids JSONB NOT NULL DEFAULT '[]',  -- provenance: the raw turns that mention it
    metadata JSONB NOT NULL DEFAULT '{}',
    merged_into TEXT,
    embedding_id TEXT,
    -- The name's embedding (float32, little-endian), for entity resolution. Read whole per scope, never
    -- searched in SQL, so BYTEA like embedding_cache: no pgvector index to keep per dimension.
    vector BYTEA,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX entities_scope ON entities (tenant_id, user_id, agent_id, session_id);

CREATE TABLE relations (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    source_id TEXT NOT NULL,
    relation TEXT NOT NULL,
    target_id TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    event_time TIMESTAMPTZ,
    valid_from TIMESTAMPTZ NOT NULL,
    valid_to TIMESTAMPTZ,
    message_ids JSONB NOT NULL DEFAULT '[]',
    memory_ids JSONB NOT NULL DEFAULT '[]',
    metadata JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
-- The walk joins on either end, one index per direction.
CREATE INDEX relations_source ON relations (source_id, valid_to);
CREATE INDEX relations_target ON relations (target_id, valid_to);
CREATE INDEX relations_scope ON relations (tenant_id, user_id, agent_id, session_id);
"""

_004_RECORD_TIME = """
-- Bitemporal memories: valid_from/valid_to is when a fact was true (from the turns that said it);
-- recorded_to is when the store stopped holding a version as current (record time).
ALTER TABLE memories ADD COLUMN recorded_to TIMESTAMPTZ;
UPDATE memories SET recorded_to = updated_at WHERE status IN ('superseded', 'deleted');
"""

_005_PROCESS = """
-- Process memory: how an agent searched. Rows carry scope columns like memories; each searchable
-- record also has an index unit in memories (memory_id), so the read path finds it. parent_id and
-- the other optional ids hold '' when absent, so equality joins (siblings) stay simple.
CREATE TABLE process_tasks (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    goal TEXT NOT NULL,
    context TEXT,
    constraints JSONB NOT NULL DEFAULT '[]',
    task_type TEXT NOT NULL,
    status TEXT NOT NULL,                    -- running | succeeded | failed | abandoned
    outcome TEXT,
    confidence DOUBLE PRECISION,
    summary TEXT,
    summary_source TEXT,
    compressed BOOLEAN NOT NULL DEFAULT FALSE,
    memory_id TEXT NOT NULL,
    summary_memory_id TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    started_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX process_tasks_scope ON process_tasks (tenant_id, user_id, agent_id, session_id, task_type);
CREATE INDEX process_tasks_type ON process_tasks (tenant_id, task_type, status);

CREATE TABLE process_steps (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    parent_id TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL,
    input TEXT NOT NULL,
    output TEXT,
    reasoning TEXT,
    hypothesis_id TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,                    -- running | succeeded | failed
    dead_end BOOLEAN NOT NULL DEFAULT FALSE,
    confidence DOUBLE PRECISION,
    generalisable BOOLEAN,
    tags JSONB NOT NULL DEFAULT '{}',
    cost_seconds DOUBLE PRECISION,
    cost_tokens BIGINT,
    memory_id TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ
);
-- The tree: a task's steps, and a step's children (the walk joins on parent_id).
CREATE INDEX process_steps_task ON process_steps (task_id, parent_id);
CREATE INDEX process_steps_parent ON process_steps (parent_id);
CREATE INDEX process_steps_scope ON process_steps (tenant_id, user_id, agent_id, session_id);

CREATE TABLE process_hypotheses (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,                    -- open | supported | refuted
    step_id TEXT NOT NULL DEFAULT '',
    evidence JSONB NOT NULL DEFAULT '[]',  -- step ids
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX process_hypotheses_task ON process_hypotheses (task_id);
CREATE INDEX process_hypotheses_scope ON process_hypotheses (tenant_id, user_id, agent_id, session_id);

CREATE TABLE process_artifacts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    step_id TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    text TEXT,
    uri TEXT,
    memory_id TEXT NOT NULL,
    metadata JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX process_artifacts_task ON process_artifacts (task_id);
CREATE INDEX process_artifacts_scope ON process_artifacts (tenant_id, user_id, agent_id, session_id);

CREATE TABLE process_strategies (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    task_type TEXT NOT NULL,
    trigger_condition JSONB NOT NULL DEFAULT '{}',
    steps JSONB NOT NULL DEFAULT '[]',
    expected_outcome TEXT,
    confidence DOUBLE PRECISION NOT NULL,
    support INTEGER NOT NULL,
    successes INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    example_task_ids JSONB NOT NULL DEFAULT '[]',
    counter_examples JSONB NOT NULL DEFAULT '[]',
    memory_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX process_strategies_scope
    ON process_strategies (tenant_id, user_id, agent_id, session_id, task_type);
"""

LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations "
    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
)
_006_ONE_VECTOR_COPY = """
-- A memory's vector is also the cached embedding of its indexed text: the cache finds it here by
-- text_hash, and embedding_cache keeps only vectors no memory holds (one copy on disk, not two).
ALTER TABLE memory_vectors ADD COLUMN text_hash TEXT;
CREATE INDEX memory_vectors_text ON memory_vectors (text_hash) WHERE text_hash IS NOT NULL;
"""

_007_KNOWLEDGE_SOURCES = """
-- Knowledge sources: one row per version of an ingested document, written in the same transaction
-- as its chunk memories (kind knowledge), holding the stable Markdown their spans point into.
CREATE TABLE knowledge_sources (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',
    collection TEXT NOT NULL,
    source TEXT NOT NULL,                    -- path, URL or upload:<name>; chunks name it in metadata
    source_hash TEXT NOT NULL,
    markdown TEXT NOT NULL,                  -- the stable Markdown the chunks' spans point into
    markdown_hash TEXT NOT NULL,
    format TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    pages INTEGER NOT NULL DEFAULT 1,
    page_starts JSONB NOT NULL DEFAULT '[]',
    chunker TEXT NOT NULL DEFAULT '',
    chunk_size INTEGER NOT NULL DEFAULT 0,
    overlap INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,                    -- active | retired
    notes JSONB NOT NULL DEFAULT '[]',
    version INTEGER NOT NULL DEFAULT 1,
    metadata JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    retired_at TIMESTAMPTZ
);
-- One live version per source of a collection; retired versions are history.
CREATE UNIQUE INDEX knowledge_sources_live
    ON knowledge_sources (tenant_id, user_id, agent_id, session_id, collection, source)
    WHERE status = 'active';
CREATE INDEX knowledge_sources_scope
    ON knowledge_sources (tenant_id, user_id, agent_id, session_id, collection, status);
CREATE INDEX knowledge_sources_hash ON knowledge_sources (source_hash);
"""

MIGRATIONS = numbered(
    {
        1: _001_INITIAL,
        2: _002_JOBS,
        3: _003_GRAPH,
        4: _004_RECORD_TIME,
        5: _005_PROCESS,
        6: _006_ONE_VECTOR_COPY,
        7: _007_KNOWLEDGE_SOURCES,
    }
)


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
