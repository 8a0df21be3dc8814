"""The SQLite schema: the shared steps of ``storage/sql/ddl.py`` in SQLite's words, plus what only SQLite has
(the FTS5 keyword index, the rev stamps and removals its in-process vector index follows).

Statements run one by one inside the migration transaction (executescript() would commit it).
"""

from __future__ import annotations

import sqlite3

from memstrata.storage.sql import ddl
from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.schema import LATEST_VERSION, numbered

__all__ = ["LATEST_VERSION", "LEDGER", "MIGRATIONS", "run_script"]

LEDGER = (
    "CREATE TABLE IF NOT EXISTS schema_migrations "
    "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)

WORDS = {
    "pk": "INTEGER PRIMARY KEY",
    "json": "TEXT",
    "ts": "TEXT",  # ISO 8601 in UTC, so text order is time order
    "real": "REAL",
    "bool": "INTEGER",
    "false": "0",
    "bigint": "INTEGER",
    "blob": "BLOB",
    # transaction counter; the vector index syncs rows with rev > its own
    "memories_columns": "rev INTEGER NOT NULL",
    "memories_options": "",
    "cache_options": " WITHOUT ROWID",
}

OWN = {
    1: """
INSERT INTO meta (key, value) VALUES ('rev', '0'), ('index_epoch', '0');
CREATE INDEX memories_rev ON memories (rev);

CREATE TABLE memory_vectors (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    embedding_id TEXT NOT NULL,
    vector BLOB NOT NULL
);

-- Pre-segmented tokens (Chinese cut by rjieba); rowid = memories.seq.
CREATE VIRTUAL TABLE memory_fts USING fts5 (tokens, tokenize = 'porter unicode61 remove_diacritics 2');
""",
    6: """
-- Hard-deleted memories, so every process's vector index drops them without a rebuild.
CREATE TABLE vector_removals (seq INTEGER PRIMARY KEY, rev INTEGER NOT NULL);
CREATE INDEX vector_removals_rev ON vector_removals (rev);
-- Names this database, so a vector index persisted beside a copy of another one is never used for it.
INSERT INTO meta (key, value) VALUES ('store_id', lower(hex(randomblob(16)))) ON CONFLICT (key) DO NOTHING;
""",
    10: """
-- history() follows a memory through the versions it replaced (details.supersedes), and an update or delete
-- frees the memory's key slot: without these, each scanned the whole history or kv_facts table (one history
-- row per write: a million-memory store read a million rows to show one memory's history).
CREATE INDEX IF NOT EXISTS history_supersedes ON history (json_extract(details, '$.supersedes'));
CREATE INDEX IF NOT EXISTS kv_facts_memory ON kv_facts (memory_id);
""",
}

MIGRATIONS = numbered(ddl.render(WORDS, OWN))


def run_script(tx: Tx, script: str) -> None:
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            tx.execute(pending)
            pending = ""
    if pending.strip():
        raise ValueError(f"incomplete SQL statement in migration: {pending!r}")
