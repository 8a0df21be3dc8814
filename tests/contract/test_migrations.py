"""A blank database migrates to the latest schema; migrating again changes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memstrata.storage.sql import ddl
from memstrata.storage.sql.schema import digest
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


# What every shipped step does, pinned: the SHA-256 prefix of its statements without comments and layout
# (schema.digest). A database created by a step must keep opening and mean the same: never change a shipped
# step, append a new one (and its pin here). Comments and indentation may change; a column, type or index not.
SHIPPED = {
    "sqlite": [
        "4f83287db2c44623",
        "3eaf1d8f5af83db9",
        "05454b5f9be1d801",
        "83e317bbade59795",
        "4352d023d3882625",
        "f7a308ef404aabf9",
        "1ca718c88ead7ebf",
        "55be8ff3de197087",
        "0e7fe8839e8f259d",
        "74f183d4e62e8ee7",
        "d8fbdf262d36fbe7",
    ],
    "postgres": [
        "09ced248cd443cc1",
        "92cb3aee03b504f4",
        "e3d5892a22b7eae3",
        "2ecc6b9b01489fb3",
        "d0767c99c82140d8",
        "145c9555c0dbad86",
        "13dc4d17ba7eceb5",
        "55be8ff3de197087",
        "0e7fe8839e8f259d",
        "e3b0c44298fc1c14",
        "d8fbdf262d36fbe7",
    ],
}


def test_shipped_migrations_never_change_and_both_backends_have_the_same_steps() -> None:
    from memstrata.storage.postgres import schema_migrations as postgres
    from memstrata.storage.sqlite import schema_migrations as sqlite

    for backend, module in (("sqlite", sqlite), ("postgres", postgres)):
        digests = [digest(script) for _, _, script in module.MIGRATIONS]
        assert digests[: len(SHIPPED[backend])] == SHIPPED[backend], backend
    assert [step[:2] for step in sqlite.MIGRATIONS] == [step[:2] for step in postgres.MIGRATIONS]


def test_a_step_pin_sees_a_changed_column_but_not_a_changed_comment() -> None:
    step = "CREATE TABLE t (\n    a TEXT NOT NULL,  -- why\n    b INTEGER\n);\nCREATE INDEX t_a ON t (a);\n"
    assert digest(step) == digest(
        "-- another comment\nCREATE INDEX t_a ON t(a);\nCREATE TABLE t (a TEXT NOT NULL, b INTEGER);"
    )
    assert digest(step) != digest(step.replace("b INTEGER", "b TEXT"))
    assert digest(step) != digest(step.replace("(a);", "(a, b);"))


def test_rendering_names_a_missing_word() -> None:
    with pytest.raises(ValueError, match="blob"):
        ddl.render({word: "" for word in ddl.WORDS if word != "blob"}, {})
