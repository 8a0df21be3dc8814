"""The SQLite schema, step by step (numbers and names in ``storage/sql/schema.py``).

Append new steps; never edit one that has shipped: databases created by it must keep opening. Statements
run one by one inside the migration transaction (executescript() would commit it).
"""

from __future__ import annotations

import sqlite3

from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.schema import LATEST_VERSION, numbered

__all__ = ["LATEST_VERSION", "LEDGER", "MIGRATIONS", "run_script"]

LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations "
    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)


def run_script(tx: Tx, script: str) -> None:
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            tx.execute(pending)
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement in migration: {pending!r}")


_001_INITIAL = """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta (key, value) VALUES ('rev', '0'), ('index_epoch', '0');

        -- Scope columns hold '' when a field is absent so equality and indexes stay simple.
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            key TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            confidence REAL NOT NULL,
            status TEXT NOT NULL,
            event_time TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            valid_from TEXT NOT NULL,
            valid_to TEXT,
            last_accessed_at TEXT,
            access_count INTEGER NOT NULL DEFAULT 0,
            provenance TEXT NOT NULL,
            embedding_id TEXT,
            content_hash TEXT NOT NULL,
            rev INTEGER NOT NULL  -- transaction counter; the vector index syncs rows with rev > its own
        );
        CREATE INDEX memories_user ON memories (tenant_id, user_id, status, kind);
        CREATE INDEX memories_agent ON memories (tenant_id, agent_id, status);
        CREATE INDEX memories_session ON memories (tenant_id, session_id, status);
        CREATE INDEX memories_rev ON memories (rev);
        CREATE INDEX memories_hash ON memories (content_hash);

        CREATE TABLE memory_vectors (
            memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
            embedding_id TEXT NOT NULL,
            vector BLOB NOT NULL
        );

        -- Pre-segmented tokens (Chinese cut by rjieba); rowid = memories.seq.
        CREATE VIRTUAL TABLE memory_fts USING fts5 (tokens, tokenize = 'porter unicode61 remove_diacritics 2');

        CREATE TABLE messages (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL,
            name TEXT,
            content TEXT NOT NULL,
            timestamp TEXT NOT NULL,
            stored_at TEXT NOT NULL
        );
        CREATE INDEX messages_scope ON messages (tenant_id, user_id, agent_id, session_id, timestamp);

        CREATE TABLE history (
            seq INTEGER PRIMARY KEY,
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
            created_at TEXT NOT NULL,
            details TEXT NOT NULL DEFAULT '{}'
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

        CREATE TABLE embedding_cache (
            embedding_id TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (embedding_id, text_hash)
        ) WITHOUT ROWID;
        """

_002_JOBS = """
        -- The durable queue of the LLM write path. A job survives a crash: a running job whose lease
        -- expired is claimed again, and its decisions are applied in the same transaction that marks
        -- it done, so nothing is applied twice.
        CREATE TABLE jobs (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL,              -- waiting | queued | running | done | failed
            message_ids TEXT NOT NULL,         -- JSON list: the raw turns this job reads
            attempts INTEGER NOT NULL DEFAULT 0,
            lease_until TEXT,
            error TEXT,
            raw_output TEXT,
            result TEXT,                       -- JSON: decisions, model calls, tokens, timings
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX jobs_status ON jobs (status, seq);
        CREATE INDEX jobs_scope ON jobs (tenant_id, user_id, agent_id, session_id, status);
        """

_003_GRAPH = """
        -- Graph memory. Entities and relations carry scope columns like memories; relations are closed
        -- (valid_to) when they stop being true, never deleted.
        CREATE TABLE entities (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            aliases TEXT NOT NULL DEFAULT '[]',      -- JSON list
            message_ids TEXT NOT NULL DEFAULT '[]',  -- JSON list: provenance
            metadata TEXT NOT NULL DEFAULT '{}',
            merged_into TEXT,
            embedding_id TEXT,
            vector BLOB,                             -- the name's embedding, for entity resolution
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX entities_scope ON entities (tenant_id, user_id, agent_id, session_id);

        CREATE TABLE relations (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            source_id TEXT NOT NULL,
            relation TEXT NOT NULL,
            target_id TEXT NOT NULL,
            confidence REAL NOT NULL,
            event_time TEXT,
            valid_from TEXT NOT NULL,
            valid_to TEXT,
            message_ids TEXT NOT NULL DEFAULT '[]',
            memory_ids TEXT NOT NULL DEFAULT '[]',
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX relations_source ON relations (source_id, valid_to);
        CREATE INDEX relations_target ON relations (target_id, valid_to);
        CREATE INDEX relations_scope ON relations (tenant_id, user_id, agent_id, session_id);
        """

_004_RECORD_TIME = """
        -- Bitemporal memories: valid_from/valid_to is when a fact was true (from the turns that said it);
        -- recorded_to is when the store stopped holding a version as current (record time).
        ALTER TABLE memories ADD COLUMN recorded_to TEXT;
        UPDATE memories SET recorded_to = updated_at WHERE status IN ('superseded', 'deleted');
        """

_005_PROCESS = """
        -- Process memory: how an agent searched. Rows carry scope columns like memories; each searchable
        -- record also has an index unit in memories (memory_id), so the read path finds it. parent_id and
        -- the other optional ids hold '' when absent, so equality joins (siblings) stay simple.
        CREATE TABLE process_tasks (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            goal TEXT NOT NULL,
            context TEXT,
            constraints TEXT NOT NULL DEFAULT '[]',  -- JSON list
            task_type TEXT NOT NULL,
            status TEXT NOT NULL,                    -- running | succeeded | failed | abandoned
            outcome TEXT,
            confidence REAL,
            summary TEXT,
            summary_source TEXT,
            compressed INTEGER NOT NULL DEFAULT 0,
            memory_id TEXT NOT NULL,
            summary_memory_id TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            started_at TEXT NOT NULL,
            ended_at TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX process_tasks_scope ON process_tasks (tenant_id, user_id, agent_id, session_id, task_type);
        CREATE INDEX process_tasks_type ON process_tasks (tenant_id, task_type, status);

        CREATE TABLE process_steps (
            seq INTEGER PRIMARY KEY,
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
            dead_end INTEGER NOT NULL DEFAULT 0,
            confidence REAL,
            generalisable INTEGER,
            tags TEXT NOT NULL DEFAULT '{}',
            cost_seconds REAL,
            cost_tokens INTEGER,
            memory_id TEXT NOT NULL,
            started_at TEXT NOT NULL,
            ended_at TEXT
        );
        -- The tree: a task's steps, and a step's children (the walk joins on parent_id).
        CREATE INDEX process_steps_task ON process_steps (task_id, parent_id);
        CREATE INDEX process_steps_parent ON process_steps (parent_id);
        CREATE INDEX process_steps_scope ON process_steps (tenant_id, user_id, agent_id, session_id);

        CREATE TABLE process_hypotheses (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            task_id TEXT NOT NULL,
            text TEXT NOT NULL,
            status TEXT NOT NULL,                    -- open | supported | refuted
            step_id TEXT NOT NULL DEFAULT '',
            evidence TEXT NOT NULL DEFAULT '[]',     -- JSON list of step ids
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX process_hypotheses_task ON process_hypotheses (task_id);
        CREATE INDEX process_hypotheses_scope ON process_hypotheses (tenant_id, user_id, agent_id, session_id);

        CREATE TABLE process_artifacts (
            seq INTEGER PRIMARY KEY,
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
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        );
        CREATE INDEX process_artifacts_task ON process_artifacts (task_id);
        CREATE INDEX process_artifacts_scope ON process_artifacts (tenant_id, user_id, agent_id, session_id);

        CREATE TABLE process_strategies (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            tenant_id TEXT NOT NULL DEFAULT '',
            user_id TEXT NOT NULL DEFAULT '',
            agent_id TEXT NOT NULL DEFAULT '',
            session_id TEXT NOT NULL DEFAULT '',
            task_type TEXT NOT NULL,
            trigger_condition TEXT NOT NULL DEFAULT '{}',
            steps TEXT NOT NULL DEFAULT '[]',
            expected_outcome TEXT,
            confidence REAL NOT NULL,
            support INTEGER NOT NULL,
            successes INTEGER NOT NULL,
            failures INTEGER NOT NULL,
            example_task_ids TEXT NOT NULL DEFAULT '[]',
            counter_examples TEXT NOT NULL DEFAULT '[]',
            memory_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX process_strategies_scope
            ON process_strategies (tenant_id, user_id, agent_id, session_id, task_type);
        """

_006_ONE_VECTOR_COPY = """
        -- A memory's vector is also the cached embedding of its indexed text: the cache finds it here by
        -- text_hash, and embedding_cache keeps only vectors no memory holds (one copy on disk, not two).
        ALTER TABLE memory_vectors ADD COLUMN text_hash TEXT;
        CREATE INDEX memory_vectors_text ON memory_vectors (text_hash) WHERE text_hash IS NOT NULL;
        -- Hard-deleted memories, so every process's vector index drops them without a rebuild.
        CREATE TABLE vector_removals (seq INTEGER PRIMARY KEY, rev INTEGER NOT NULL);
        CREATE INDEX vector_removals_rev ON vector_removals (rev);
        -- Names this database, so a vector index persisted beside a copy of another one is never used for it.
        INSERT INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16)))) ON CONFLICT (key) DO NOTHING;
        """

_007_KNOWLEDGE_SOURCES = """
        -- Knowledge sources: one row per version of an ingested document, written in the same transaction
        -- as its chunk memories (kind knowledge), holding the stable Markdown their spans point into.
        CREATE TABLE knowledge_sources (
            seq INTEGER PRIMARY KEY,
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
            page_starts TEXT NOT NULL DEFAULT '[]',
            chunker TEXT NOT NULL DEFAULT '',
            chunk_size INTEGER NOT NULL DEFAULT 0,
            overlap INTEGER NOT NULL DEFAULT 0,
            chunks INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,                    -- active | retired
            notes TEXT NOT NULL DEFAULT '[]',
            version INTEGER NOT NULL DEFAULT 1,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            retired_at TEXT
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
