"""Lookups on the write and history paths are planned on their indexes (SQLite), so they cost the same in a store
of a million memories as in a store of ten.

SQLite's planner has no statistics here. It counted equal columns and chose the scope index (tenant, user, status,
kind) over the one-column hash index, so each "is this text already in the scope?" scanned the whole scope: an
import into a large scope slowed quadratically (a batch of 10,000 texts into a 30,000-memory scope took minutes).
history() and the freeing of a key slot had no index at all (PostgreSQL had both) and scanned their tables.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite import dialect as sqlite_dialect
from memstrata.storage.sqlite.store import SQLiteStore


@pytest.fixture
def traced(
    tmp_path: Path, embedder: UniversalSentenceEncoder, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Memory, list[str]]]:
    """A memory on SQLite whose every statement is recorded with its values bound."""
    executed: list[str] = []
    opened = sqlite_dialect.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = opened(*args, **kwargs)
        conn.set_trace_callback(executed.append)
        return conn

    monkeypatch.setattr(sqlite_dialect, "connect", connect)
    path = tmp_path / "m.db"
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))
    yield memory, executed
    memory.close()


def _plans(memory: Memory, statements: list[str]) -> list[tuple[str, str]]:
    with sqlite3.connect(memory.store.location) as conn:
        return [(sql, " ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))) for sql in statements]


def test_text_lookups_use_the_hash_index(traced: tuple[Memory, list[str]]) -> None:
    memory, executed = traced
    for scope in ({"user_id": "u"}, {"user_id": "u", "session_id": "s"}, {"user_id": "u", "agent_id": "a"}):
        memory.add(["I live in Hangzhou", "我喜欢打羽毛球"], **scope)
        memory.add("I live in Hangzhou", **scope)  # the same text again: found, not stored twice
        assert [item.text for item in memory.get_all(**scope)].count("I live in Hangzhou") == 1
    lookups = [sql for sql in executed if "content_hash = " in sql and sql.lstrip().upper().startswith("SELECT")]
    assert lookups, "add() looked up no text by its hash"
    for sql, plan in _plans(memory, lookups):
        assert "memories_hash" in plan, (sql, plan)


def test_history_and_key_slots_are_read_by_index(traced: tuple[Memory, list[str]]) -> None:
    memory, executed = traced
    first = memory.add("Postgres 16", user_id="u", key="app:db:engine").results[0].id
    second = memory.update(first, "Postgres 17", user_id="u").id
    assert [event.new_text for event in memory.history(second, user_id="u")][-1] == "Postgres 17"
    memory.delete(second, user_id="u")
    touching = [sql for sql in executed if sql.lstrip().upper().startswith(("SELECT", "DELETE", "UPDATE"))
                and (" history " in sql or "kv_facts" in sql)]  # fmt: skip
    assert any("FROM history" in sql for sql in touching) and any("DELETE FROM kv_facts" in sql for sql in touching)
    for sql, plan in _plans(memory, touching):
        assert not re.search(r"\bSCAN (history|h|kv_facts)\b", plan), (sql, plan)
