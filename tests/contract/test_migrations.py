"""A blank database migrates to the latest schema; migrating again changes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memstrata.storage.sqlite.schema_migrations import LATEST_VERSION, MIGRATIONS
from memstrata.storage.sqlite.store import SQLiteStore

TABLES = {
    "schema_migrations", "meta", "memories", "memory_vectors", "memory_fts", "messages", "history", "kv_facts",
    "embedding_cache",
}  # fmt: skip


def test_blank_database_gets_every_table(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table')")}
    assert names >= TABLES
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [number for number, _, _ in MIGRATIONS] and versions[-1] == LATEST_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_does_not_migrate_twice(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "m.db").close()
    store = SQLiteStore(tmp_path / "m.db")
    assert store.schema_version == LATEST_VERSION
    store.close()
    conn = sqlite3.connect(tmp_path / "m.db")
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)
