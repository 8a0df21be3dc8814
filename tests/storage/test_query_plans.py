"""The statements add() runs to find a text already in the scope are planned on the hash index (SQLite).

SQLite's planner has no statistics here, so it counts equal columns: the scope index (tenant, user, status, kind)
beat the one-column hash index, and each lookup scanned the whole scope. An import into a large scope slowed
quadratically: a batch of 10,000 texts into a 30,000-memory scope took minutes instead of seconds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite import dialect as sqlite_dialect
from memstrata.storage.sqlite.store import SQLiteStore


def test_text_lookups_use_the_hash_index(
    tmp_path: Path, embedder: UniversalSentenceEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    executed: list[str] = []
    opened = sqlite_dialect.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = opened(*args, **kwargs)
        conn.set_trace_callback(executed.append)  # statements with their values bound
        return conn

    monkeypatch.setattr(sqlite_dialect, "connect", traced)
    path = tmp_path / "m.db"
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))
    try:
        for scope in ({"user_id": "u"}, {"user_id": "u", "session_id": "s"}, {"user_id": "u", "agent_id": "a"}):
            memory.add(["I live in Hangzhou", "我喜欢打羽毛球"], **scope)
            memory.add("I live in Hangzhou", **scope)  # the same text again: found, not stored twice
            assert [item.text for item in memory.get_all(**scope)].count("I live in Hangzhou") == 1
    finally:
        memory.close()
    lookups = [sql for sql in executed if "content_hash = " in sql and sql.lstrip().upper().startswith("SELECT")]
    assert lookups, "add() looked up no text by its hash"
    with sqlite3.connect(path) as conn:
        for sql in lookups:
            plan = " ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            assert "memories_hash" in plan, (sql, plan)
