"""`memstrata migrate`: SQLite -> PostgreSQL -> SQLite loses nothing, is verified by counts and
checksums, and an interrupted run finishes when run again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memstrata import Memory
from memstrata.config import StoreSettings, load_settings
from memstrata.records.graph import Entity, Relation
from memstrata.storage.copy import TABLES, copy_store, verify_copy
from memstrata.storage.factory import open_store
from memstrata.storage.protocol import WriteBatch
from memstrata.testing import HashingEmbedder
from memstrata.types import Scope

EVERYTHING = {"status": ["active", "pending", "archived", "deleted", "superseded"]}


def _memory(location: str) -> Memory:
    settings = load_settings({"store": {"path": location}, "write": {"background": False, "trigger": "every_n"}})
    return Memory(open_store(StoreSettings(path=location)), HashingEmbedder(dims=16), settings=settings)


def _fill(location: str, notes: int = 30) -> None:
    with _memory(location) as memory:
        memory.add(
            [{"role": "user", "content": "我住在杭州"}, {"role": "assistant", "content": "Got it."}], user_id="u1"
        )
        kept = memory.add("Prefers dark mode", user_id="u1", kind="preference", metadata={"ui": True, "n": 1.5})
        memory.update(kept.results[0].id, "Prefers dark mode everywhere", user_id="u1", reason="clarified")
        memory.delete(memory.add("temporary note", user_id="u1").results[0].id, user_id="u1")
        memory.add("PostgreSQL 17", user_id="u1", agent_id="a1", key="atlas:db:engine")
        memory.add("I started learning Rust", user_id="u2", infer=True)  # a job still waiting for more turns
        memory.for_tenant("acme").add("tenant secret", user_id="u1")
        memory.add([f"note {i} about topic {i % 7}" for i in range(notes)], user_id="u3")
        memory.search("dark mode", user_id="u1")  # access counts must survive


def _snapshot(location: str) -> dict[str, Any]:
    with _memory(location) as memory:
        items = {user: memory.get_all(user_id=user, filters=EVERYTHING, limit=1000, descending=False)
                 for user in ("u1", "u2", "u3")}  # fmt: skip
        return {
            "items": items,
            "history": [memory.history(m.id, user_id=m.scope.user_id) for ms in items.values() for m in ms],
            "turns": memory.messages(user_id="u1"),
            "jobs": memory.list_jobs(limit=100),
            "key": memory.search("atlas:db:engine", user_id="u1", agent_id="a1", record_access=False)[0].id,
            # a key fact is found by its key's words: a copy indexed it without them (found by a user trial)
            "key_words": [
                (hit.text, hit.breakdown.keyword_match)
                for hit in memory.search("which db engine", user_id="u1", agent_id="a1", record_access=False)
            ],
            "top": memory.search("note 3 about topic 3", user_id="u3", limit=1, record_access=False)[0].text,
            "tenant": [m.text for m in memory.for_tenant("acme").get_all(user_id="u1")],
            "vectors": memory.stats().vectors,
        }


def test_sqlite_to_postgres_and_back_is_lossless(tmp_path: Path, pg_url: str) -> None:
    source, back = str(tmp_path / "source.db"), str(tmp_path / "back.db")
    _fill(source)
    there = copy_store(source, pg_url, chunk_size=7)
    assert there.verified and all(t.source_rows == t.target_rows for t in there.tables)
    assert all(t.copied == t.source_rows and t.skipped == 0 for t in there.tables)
    returned = copy_store(pg_url, back, chunk_size=7)
    assert returned.verified and verify_copy(source, back).verified
    expected = _snapshot(source)
    assert _snapshot(pg_url) == expected
    assert _snapshot(back) == expected


@pytest.mark.parametrize("direction", ["sqlite->postgres", "postgres->sqlite"])
def test_an_interrupted_migration_resumes(tmp_path: Path, pg_url: str, direction: str) -> None:
    sqlite = str(tmp_path / "store.db")
    source, target = (sqlite, pg_url) if direction == "sqlite->postgres" else (pg_url, sqlite)
    _fill(source, notes=120)
    chunks = {"memories": 0}

    def crash_midway(table: str, copied: int, skipped: int) -> None:
        if table == "memories":
            chunks["memories"] += 1
            if chunks["memories"] == 3:
                raise KeyboardInterrupt  # like Ctrl-C between two chunks

    with pytest.raises(KeyboardInterrupt):
        copy_store(source, target, chunk_size=25, progress=crash_midway)
    assert not verify_copy(source, target).verified
    resumed = copy_store(source, target, chunk_size=25)
    tables = {t.table: t for t in resumed.tables}
    assert resumed.verified
    assert tables["memories"].skipped == 75 and tables["memories"].copied == tables["memories"].source_rows - 75
    assert _snapshot(target) == _snapshot(source)


def test_migrate_command(tmp_path: Path, pg_url: str) -> None:
    source = str(tmp_path / "cli.db")
    _fill(source, notes=3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "memstrata", "--json", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)

    done = cli("migrate", "--from", source, "--to", pg_url)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["verified"] and [t["table"] for t in report["tables"]] == [t.name for t in TABLES]
    other = str(tmp_path / "other.db")
    _fill(other, notes=1)
    differs = cli("copy", "--verify-only", "--from", other, "--to", pg_url)
    assert differs.returncode == 1 and "run `memstrata copy` again" in differs.stderr
    missing = cli("migrate", "--from", str(tmp_path / "nope.db"), "--to", pg_url)
    assert missing.returncode == 1 and "no SQLite store at" in missing.stderr


def _fill_graph(location: str) -> None:
    """Entities (one merged, two with name vectors, one in another tenant) and relations, one closed."""
    t0 = datetime(2025, 3, 1, 8, 0, tzinfo=UTC)
    stamps = {"created_at": t0, "updated_at": t0}
    alice, acme = Scope(user_id="u1"), Scope(tenant_id="acme", user_id="u1")
    people = [
        Entity(
            id="e1", scope=alice, name="字节跳动", type="organization", aliases=("字节",), metadata={"k": 1}, **stamps
        ),
        Entity(id="e2", scope=alice, name="王总", type="person", message_ids=("m1", "m2"), **stamps),
        Entity(id="e3", scope=alice, name="王先生", type="person", merged_into="e2", **stamps),
        Entity(id="e4", scope=acme, name="Atlas", type="project", **stamps),
    ]
    edges = [
        Relation(id="r1", scope=alice, source_id="e2", relation="works_at", target_id="e1", confidence=0.9,
                 valid_from=t0, memory_ids=("mem1",), **stamps),
        Relation(id="r2", scope=alice, source_id="e2", relation="lives_in", target_id="e1", valid_from=t0,
                 valid_to=t0 + timedelta(days=2), event_time=t0, metadata={"why": "moved"}, **stamps),
    ]  # fmt: skip
    vectors = [("e1", np.linspace(0, 1, 16, dtype=np.float32)), ("e2", np.full(16, 0.25, dtype=np.float32))]
    store = open_store(StoreSettings(path=location))
    try:
        store.write(WriteBatch(entities=people, entity_vectors=vectors, relations=edges, embedding_id="hash:16"))
    finally:
        store.close()


def _graph_snapshot(location: str) -> dict[str, Any]:
    store = open_store(StoreSettings(path=location))
    try:
        alice = Scope(user_id="u1")
        vectors = store.entity_vectors(alice, "hash:16")
        return {
            "entities": store.graph_entities(alice, ["e1", "e2", "e3"]),
            "acme": store.graph_entities(Scope(tenant_id="acme", user_id="u1")),
            "relations": store.graph_relations(alice, include_closed=True),
            "walk": store.graph_walk(alice, ["e1"], 2, include_closed=True),
            "vectors": {entity_id: vector.tolist() for entity_id, vector in vectors.items()},
            "stats": store.stats().extra,
        }
    finally:
        store.close()


def test_migration_copies_the_graph_with_entity_vectors(tmp_path: Path, pg_url: str) -> None:
    source, back = str(tmp_path / "graph.db"), str(tmp_path / "graph-back.db")
    _fill_graph(source)
    there = copy_store(source, pg_url, chunk_size=2)
    tables = {t.table: t for t in there.tables}
    assert there.verified and tables["entities"].copied == 4 and tables["relations"].copied == 2
    assert copy_store(pg_url, back, chunk_size=2).verified and verify_copy(source, back).verified
    expected = _graph_snapshot(source)
    assert sorted(expected["vectors"]) == ["e1", "e2"] and expected["stats"]["closed_relations"] == 1
    assert _graph_snapshot(pg_url) == expected
    assert _graph_snapshot(back) == expected
