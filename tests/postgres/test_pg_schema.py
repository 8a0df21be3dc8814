"""The PostgreSQL schema: numbered migrations (also under concurrent openers), the HNSW index per
dimension, backend selection by URL, and errors that say what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psycopg
import pytest

from memstrata import Memory, StoreError
from memstrata.config import StoreSettings
from memstrata.storage.factory import open_store
from memstrata.storage.postgres.connection import masked
from memstrata.storage.postgres.schema_migrations import LATEST_VERSION, MIGRATIONS
from memstrata.storage.postgres.store import PostgresStore
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.testing import HashingEmbedder
from support.at_once import failures_at_once

TABLES = {
    "schema_migrations", "meta", "memories", "memory_vectors", "messages", "history", "kv_facts", "embedding_cache",
    "jobs", "entities", "relations",
}  # fmt: skip


def _query(url: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def test_blank_database_gets_every_table_once(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    store = PostgresStore(pg_url)  # reopening migrates nothing
    assert store.schema_version == LATEST_VERSION
    store.close()
    names = {row[0] for row in _query(pg_url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
    assert names >= TABLES
    versions = [row[0] for row in _query(pg_url, "SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [number for number, _, _ in MIGRATIONS]
    indexes = {row[0] for row in _query(pg_url, "SELECT indexname FROM pg_indexes WHERE tablename = 'memories'")}
    assert {"memories_tokens", "memories_metadata", "memories_user"} <= indexes
    graph = {
        row[0]
        for row in _query(pg_url, "SELECT indexname FROM pg_indexes WHERE tablename IN ('entities', 'relations')")
    }
    assert {"entities_scope", "relations_source", "relations_target", "relations_scope"} <= graph
    assert _query(pg_url, "SELECT extversion >= '0.8' FROM pg_extension WHERE extname = 'vector'") == [(True,)]


def test_processes_opening_a_new_database_at_once_migrate_it_once(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:  # an empty database, no schema yet
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
    errors = failures_at_once(lambda: PostgresStore(pg_url, pool_size=1).close(), threads=6)
    assert errors == []
    assert _query(pg_url, "SELECT COUNT(*) FROM schema_migrations") == [(len(MIGRATIONS),)]


def test_hnsw_index_follows_the_embedding_dimension(pg_url: str) -> None:
    store = PostgresStore(pg_url)
    memory = Memory(store, HashingEmbedder(dims=24))
    memory.add("first memory", user_id="u")

    def vector_indexes() -> set[str]:
        rows = _query(pg_url, "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'memory_vectors_hnsw%'")
        return {str(row[0]) for row in rows}

    [definition] = vector_indexes()
    assert "hnsw" in definition and "vector(24)" in definition and "vector_cosine_ops" in definition
    store.set_embedding_id("bigger:3000")  # above 2,000 dims: halfvec
    assert any("halfvec(3000)" in d for d in vector_indexes())
    store.set_embedding_id("hashing-test:24")
    vector = np.ones(24, dtype=np.float32) / np.sqrt(24)
    with pytest.raises(Exception, match="shape"):
        store.write(
            WriteBatch(vectors=[(memory.get_all(user_id="u")[0].id, vector[:5])], embedding_id="hashing-test:24")
        )
    memory.close()


def test_store_path_selects_the_backend(pg_url: str, tmp_path: Path) -> None:
    pg = open_store(StoreSettings(path=pg_url, pool_size=2))
    sqlite = open_store(StoreSettings(path=str(tmp_path / "m.db")))
    assert isinstance(pg, PostgresStore) and isinstance(sqlite, SQLiteStore)
    pg.close()
    sqlite.close()
    with Memory.from_config({"store": {"path": pg_url}}) as memory:
        memory.add("我住在杭州", user_id="u1")
        assert memory.search("杭州", user_id="u1")[0].text == "我住在杭州"
        assert memory.stats().location == pg_url


def test_passwords_never_show_and_errors_say_what_to_do() -> None:
    assert masked("postgresql://app:s3cret@db.internal:5432/mem") == "postgresql://app:***@db.internal:5432/mem"
    assert masked("postgresql://app@db/mem") == "postgresql://app@db/mem"
    # libpq also takes the password as a query parameter: it was printed whole
    assert masked("postgresql:///mem?host=/run/pg&password=s3cret&user=app") == (
        "postgresql:///mem?host=/run/pg&password=***&user=app"
    )
    with pytest.raises(StoreError) as refused:
        PostgresStore("postgresql:///mem?host=/nonexistent-socket-dir&password=s3cret", timeout_s=2)
    assert "s3cret" not in str(refused.value)
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL.*check store\.path") as caught:
        PostgresStore("postgresql://app:s3cret@/mem?host=/nonexistent-socket-dir", timeout_s=2)
    assert "s3cret" not in str(caught.value)


def test_connections_the_server_dropped_are_replaced_not_failed(pg_url: str, postgres_databases: Any) -> None:
    """After a server restart every pooled connection was stale and failed one request each with 503 ("lost the
    connection to PostgreSQL"); the pool now checks a connection before handing it out."""
    store = PostgresStore(pg_url, pool_size=3)
    try:
        assert store.stats(None).schema_version == LATEST_VERSION
        database = urlsplit(pg_url).path.lstrip("/")
        with psycopg.connect(postgres_databases.admin_url, autocommit=True) as admin:
            ended = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchall()
        assert ended  # the pool's connections are gone, as after a restart
        for _ in range(4):
            assert store.stats(None).schema_version == LATEST_VERSION
    finally:
        store.close()


def test_a_write_to_a_row_deleted_meanwhile_says_so() -> None:
    """A writer racing an erase failed with PostgreSQL's raw foreign-key text ("violates foreign key constraint
    memory_vectors_memory_seq_fkey"); it is a NotFoundError that says what happened."""
    from memstrata.errors import NotFoundError
    from memstrata.storage.postgres.connection import translated

    with pytest.raises(NotFoundError, match="deleted meanwhile"), translated("postgresql://db/mem"):
        raise psycopg.errors.ForeignKeyViolation("insert or update on table violates foreign key constraint")
