"""A blank database migrates to the latest schema; migrating again changes nothing."""

from __future__ import annotations

import hashlib
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


# SHA-256 prefixes of every shipped schema migration. A database created by one must keep opening and mean the
# same: never edit a shipped step, append a new one (and its hash here).
SHIPPED = {
    "sqlite": [
        "5feb9364fc72d5fd",
        "35608122eabbd220",
        "53b6d0af67d1951e",
        "a7acb58016b0c0de",
        "dc3e89b3aba7ac2e",
        "f122004d534104fa",
        "40902910d7e407fb",
    ],
    "postgres": [
        "ff437033bab6f3ac",
        "9e0f875bfc701ae4",
        "e0d9b0ce8551336e",
        "2d96997aa0e24bf9",
        "a0a91882ab2b8b5d",
        "aaa41bd858dbd52a",
        "62e895e51026cdf2",
    ],
}


def test_shipped_migrations_never_change_and_both_backends_have_the_same_steps() -> None:
    from memstrata.storage.postgres import schema_migrations as postgres
    from memstrata.storage.sqlite import schema_migrations as sqlite

    for backend, module in (("sqlite", sqlite), ("postgres", postgres)):
        digests = [hashlib.sha256(script.encode()).hexdigest()[:16] for _, _, script in module.MIGRATIONS]
        assert digests[: len(SHIPPED[backend])] == SHIPPED[backend], backend
    assert [step[:2] for step in sqlite.MIGRATIONS] == [step[:2] for step in postgres.MIGRATIONS]
