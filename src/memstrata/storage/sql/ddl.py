"""The schema, written once: every table both backends share, with ``$names`` where their SQL differs.

A backend renders a step with :func:`render`, giving its types (``$pk``, ``$json``, ``$ts``, ``$real``,
``$bool``, ``$false``, ``$bigint``, ``$blob``) and the few clauses only it has (``$memories_columns`` ...),
and appends its own statements (SQLite's FTS5 table, PostgreSQL's GIN indexes). ``storage/sql/schema.py``
pins what each shipped step does (:func:`~memstrata.storage.sql.schema.digest`): a refactoring here that
changed a single column of a shipped step fails the suite. Append new steps; never change a shipped one.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Template

# Every record table opens with its key and the scope columns (they hold '' when a field is absent, so
# equality and indexes stay simple): ``$record`` stands for them, ``$scope`` for the scope alone.
SCOPE_COLUMNS = """tenant_id TEXT NOT NULL DEFAULT '',
    user_id TEXT NOT NULL DEFAULT '',
    agent_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL DEFAULT '',"""

_001_INITIAL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE memories (
    $record
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    key TEXT,
    metadata $json NOT NULL DEFAULT '{}',
    confidence $real NOT NULL,
    status TEXT NOT NULL,
    event_time $ts,
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL,
    valid_from $ts NOT NULL,
    valid_to $ts,
    last_accessed_at $ts,
    access_count INTEGER NOT NULL DEFAULT 0,
    provenance $json NOT NULL,
    embedding_id TEXT,
    content_hash TEXT NOT NULL,
    $memories_columns
)$memories_options;
CREATE INDEX memories_user ON memories (tenant_id, user_id, status, kind);
CREATE INDEX memories_agent ON memories (tenant_id, agent_id, status);
CREATE INDEX memories_session ON memories (tenant_id, session_id, status);
CREATE INDEX memories_hash ON memories (content_hash);

CREATE TABLE messages (
    $record
    role TEXT NOT NULL,
    name TEXT,
    content TEXT NOT NULL,
    timestamp $ts NOT NULL,
    stored_at $ts NOT NULL
);
CREATE INDEX messages_scope ON messages (tenant_id, user_id, agent_id, session_id, timestamp);

CREATE TABLE history (
    seq $pk,
    id TEXT NOT NULL UNIQUE,
    memory_id TEXT NOT NULL,
    $scope
    action TEXT NOT NULL,
    old_text TEXT,
    new_text TEXT,
    actor TEXT NOT NULL,
    reason TEXT,
    created_at $ts NOT NULL,
    details $json NOT NULL DEFAULT '{}'
);
CREATE INDEX history_memory ON history (memory_id, seq);

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

-- Embeddings by text hash: a cache, never searched.
CREATE TABLE embedding_cache (
    embedding_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector $blob NOT NULL,
    PRIMARY KEY (embedding_id, text_hash)
)$cache_options;
"""

_002_JOBS = """
-- The durable queue of the LLM write path. A job survives a crash: a running job whose lease
-- expired is claimed again, and its decisions are applied in the same transaction that marks
-- it done, so nothing is applied twice.
CREATE TABLE jobs (
    seq $pk,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    $scope
    status TEXT NOT NULL,              -- waiting | queued | running | done | failed
    message_ids $json NOT NULL,        -- the raw turns this job reads
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_until $ts,
    error TEXT,
    raw_output TEXT,
    result $json,                      -- decisions, model calls, tokens, timings
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL
);
CREATE INDEX jobs_status ON jobs (status, seq);
CREATE INDEX jobs_scope ON jobs (tenant_id, user_id, agent_id, session_id, status);
"""

_003_GRAPH = """
-- Graph memory. Entities and relations carry scope columns like memories; relations are closed
-- (valid_to) when they stop being true, never deleted.
CREATE TABLE entities (
    $record
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    aliases $json NOT NULL DEFAULT '[]',
    message_ids $json NOT NULL DEFAULT '[]',  -- provenance: the raw turns that mention it
    metadata $json NOT NULL DEFAULT '{}',
    merged_into TEXT,
    embedding_id TEXT,
    -- The name's embedding (float32, little-endian), for entity resolution: read whole per scope, never
    -- searched in SQL, so no vector index to keep per dimension.
    vector $blob,
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL
);
CREATE INDEX entities_scope ON entities (tenant_id, user_id, agent_id, session_id);

CREATE TABLE relations (
    $record
    source_id TEXT NOT NULL,
    relation TEXT NOT NULL,
    target_id TEXT NOT NULL,
    confidence $real NOT NULL,
    event_time $ts,
    valid_from $ts NOT NULL,
    valid_to $ts,
    message_ids $json NOT NULL DEFAULT '[]',
    memory_ids $json NOT NULL DEFAULT '[]',
    metadata $json NOT NULL DEFAULT '{}',
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL
);
-- The walk joins on either end, one index per direction.
CREATE INDEX relations_source ON relations (source_id, valid_to);
CREATE INDEX relations_target ON relations (target_id, valid_to);
CREATE INDEX relations_scope ON relations (tenant_id, user_id, agent_id, session_id);
"""

_004_RECORD_TIME = """
-- Bitemporal memories: valid_from/valid_to is when a fact was true (from the turns that said it);
-- recorded_to is when the store stopped holding a version as current (record time).
ALTER TABLE memories ADD COLUMN recorded_to $ts;
UPDATE memories SET recorded_to = updated_at WHERE status IN ('superseded', 'deleted');
"""

_005_PROCESS = """
-- Process memory: how an agent searched. Rows carry scope columns like memories; each searchable
-- record also has an index unit in memories (memory_id), so the read path finds it. parent_id and
-- the other optional ids hold '' when absent, so equality joins (siblings) stay simple.
CREATE TABLE process_tasks (
    $record
    goal TEXT NOT NULL,
    context TEXT,
    constraints $json NOT NULL DEFAULT '[]',
    task_type TEXT NOT NULL,
    status TEXT NOT NULL,                    -- running | succeeded | failed | abandoned
    outcome TEXT,
    confidence $real,
    summary TEXT,
    summary_source TEXT,
    compressed $bool NOT NULL DEFAULT $false,
    memory_id TEXT NOT NULL,
    summary_memory_id TEXT,
    metadata $json NOT NULL DEFAULT '{}',
    started_at $ts NOT NULL,
    ended_at $ts,
    updated_at $ts NOT NULL
);
CREATE INDEX process_tasks_scope ON process_tasks (tenant_id, user_id, agent_id, session_id, task_type);
CREATE INDEX process_tasks_type ON process_tasks (tenant_id, task_type, status);

CREATE TABLE process_steps (
    $record
    task_id TEXT NOT NULL,
    parent_id TEXT NOT NULL DEFAULT '',
    action TEXT NOT NULL,
    input TEXT NOT NULL,
    output TEXT,
    reasoning TEXT,
    hypothesis_id TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,                    -- running | succeeded | failed
    dead_end $bool NOT NULL DEFAULT $false,
    confidence $real,
    generalisable $bool,
    tags $json NOT NULL DEFAULT '{}',
    cost_seconds $real,
    cost_tokens $bigint,
    memory_id TEXT NOT NULL,
    started_at $ts NOT NULL,
    ended_at $ts
);
-- The tree: a task's steps, and a step's children (the walk joins on parent_id).
CREATE INDEX process_steps_task ON process_steps (task_id, parent_id);
CREATE INDEX process_steps_parent ON process_steps (parent_id);
CREATE INDEX process_steps_scope ON process_steps (tenant_id, user_id, agent_id, session_id);

CREATE TABLE process_hypotheses (
    $record
    task_id TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,                    -- open | supported | refuted
    step_id TEXT NOT NULL DEFAULT '',
    evidence $json NOT NULL DEFAULT '[]',    -- step ids
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL
);
CREATE INDEX process_hypotheses_task ON process_hypotheses (task_id);
CREATE INDEX process_hypotheses_scope ON process_hypotheses (tenant_id, user_id, agent_id, session_id);

CREATE TABLE process_artifacts (
    $record
    task_id TEXT NOT NULL,
    step_id TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    text TEXT,
    uri TEXT,
    memory_id TEXT NOT NULL,
    metadata $json NOT NULL DEFAULT '{}',
    created_at $ts NOT NULL
);
CREATE INDEX process_artifacts_task ON process_artifacts (task_id);
CREATE INDEX process_artifacts_scope ON process_artifacts (tenant_id, user_id, agent_id, session_id);

CREATE TABLE process_strategies (
    $record
    task_type TEXT NOT NULL,
    trigger_condition $json NOT NULL DEFAULT '{}',
    steps $json NOT NULL DEFAULT '[]',
    expected_outcome TEXT,
    confidence $real NOT NULL,
    support INTEGER NOT NULL,
    successes INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    example_task_ids $json NOT NULL DEFAULT '[]',
    counter_examples $json NOT NULL DEFAULT '[]',
    memory_id TEXT NOT NULL,
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL
);
CREATE INDEX process_strategies_scope
    ON process_strategies (tenant_id, user_id, agent_id, session_id, task_type);
"""

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
    $record
    collection TEXT NOT NULL,
    source TEXT NOT NULL,                    -- path, URL or upload:<name>; chunks name it in metadata
    source_hash TEXT NOT NULL,
    markdown TEXT NOT NULL,                  -- the stable Markdown the chunks' spans point into
    markdown_hash TEXT NOT NULL,
    format TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    pages INTEGER NOT NULL DEFAULT 1,
    page_starts $json NOT NULL DEFAULT '[]',
    chunker TEXT NOT NULL DEFAULT '',
    chunk_size INTEGER NOT NULL DEFAULT 0,
    overlap INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,                    -- active | retired
    notes $json NOT NULL DEFAULT '[]',
    version INTEGER NOT NULL DEFAULT 1,
    metadata $json NOT NULL DEFAULT '{}',
    created_at $ts NOT NULL,
    updated_at $ts NOT NULL,
    retired_at $ts
);
-- One live version per source of a collection; retired versions are history.
CREATE UNIQUE INDEX knowledge_sources_live
    ON knowledge_sources (tenant_id, user_id, agent_id, session_id, collection, source)
    WHERE status = 'active';
CREATE INDEX knowledge_sources_scope
    ON knowledge_sources (tenant_id, user_id, agent_id, session_id, collection, status);
CREATE INDEX knowledge_sources_hash ON knowledge_sources (source_hash);
"""

# Time-range searches ("what did I do last spring?") list the scope's memories whose event lies in the range
# when too few of the vector candidates do: without this index that is a scan of the scope (0.8 s at 1M).
_008_EVENT_TIME = """
CREATE INDEX memories_event ON memories (tenant_id, user_id, event_time);
"""

# The embedding cache was keyed by the plain text hash, so one tenant's write could answer (and, by a hit or its
# speed, reveal) another tenant's text. A named tenant's texts now hash with its id (indexing.text_hash); hashes
# written before were plain, so a named tenant's memory vectors stop doubling as the cache, and the cache itself,
# whose rows name no tenant, starts empty (a cache: it costs a re-embedding, nothing else).
_009_TENANT_CACHE = """
UPDATE memory_vectors SET text_hash = NULL
    WHERE text_hash IS NOT NULL AND memory_seq IN (SELECT seq FROM memories WHERE tenant_id <> '');
DELETE FROM embedding_cache;
"""

# Nothing shared: SQLite's own indexes that PostgreSQL has had since step 1 (see the SQLite OWN[10]).
_010_LOOKUP_INDEXES = ""

# What the word tables read in a memory's text (stored_words.py), kept with the row so a search reads it instead of
# computing it for each of its ~50 candidates. NULL (rows written before): computed when read, written by a rebuild.
_011_STORED_WORDS = """
ALTER TABLE memories ADD COLUMN words TEXT;
"""

SHARED = {
    1: _001_INITIAL,
    2: _002_JOBS,
    3: _003_GRAPH,
    4: _004_RECORD_TIME,
    5: _005_PROCESS,
    6: _006_ONE_VECTOR_COPY,
    7: _007_KNOWLEDGE_SOURCES,
    8: _008_EVENT_TIME,
    9: _009_TENANT_CACHE,
    10: _010_LOOKUP_INDEXES,
    11: _011_STORED_WORDS,
}
WORDS = (
    "pk",
    "json",
    "ts",
    "real",
    "bool",
    "false",
    "bigint",
    "blob",
    "memories_columns",
    "memories_options",
    "cache_options",
)


def render(words: Mapping[str, str], own: Mapping[int, str]) -> dict[int, str]:
    """Each step's SQL for one backend: the shared tables with ``words`` filled in, then its ``own`` statements."""
    missing = set(WORDS) - set(words)
    if missing:
        raise ValueError(f"a backend's schema words lack {sorted(missing)}")
    record = f"seq {words['pk']},\n    id TEXT NOT NULL UNIQUE,\n    {SCOPE_COLUMNS}"
    values = {"scope": SCOPE_COLUMNS, "record": record, **words}
    return {number: Template(script).substitute(values) + own.get(number, "") for number, script in SHARED.items()}
