"""Erasure and purge leave no trace (issue 13), on every backend: after ``erase_scope`` the user's strings are
in no live row, no cached embedding of any text the user ever had survives, and on SQLite the strings are
in neither the database file, nor its WAL, nor the FTS5 shadow tables."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from memstrata.indexing import index_text, text_hash
from memstrata.lexical import keyword_tokens
from memstrata.query import Filters
from memstrata.records.graph import Entity
from memstrata.storage.protocol import JobUpdate, StatusChange, Store, WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import (
    HistoryAction,
    HistoryEvent,
    Job,
    JobStatus,
    MemoryItem,
    MemoryStatus,
    Message,
    Scope,
    new_id,
)

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
ALICE, BOB = Scope(user_id="alice"), Scope(user_id="bob")
EMBEDDING = "test:4"
# One marker per place a user's words go; each is unique to Alice.
OLD, SUPERSEDED, LIVE, TURN, NAME, ALIAS, OUTPUT, META = (
    "qzoldversion", "qzsupersededfact", "爱丽丝的暗号是青蛙", "qzrawturn", "qzentityname", "qzalias", "qzmodeloutput",
    "qzmetavalue",
)  # fmt: skip
MARKERS = [OLD, SUPERSEDED, LIVE, TURN, NAME, ALIAS, OUTPUT, META]


def memory(text: str, scope: Scope = ALICE, **fields: object) -> MemoryItem:
    return MemoryItem.model_validate(
        {"id": new_id(), "scope": scope, "kind": "fact", "text": text, "created_at": T0, "updated_at": T0,
         "valid_from": T0, **fields}
    )  # fmt: skip


def event(item: MemoryItem, action: HistoryAction, old: str | None, new: str | None) -> HistoryEvent:
    return HistoryEvent(id=new_id(), memory_id=item.id, scope=item.scope, action=action, old_text=old,
                        new_text=new, actor="test", reason=None, created_at=T0)  # fmt: skip


def vector(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(4).astype(np.float32)


def fill(store: Store) -> list[str]:
    """Alice's data in every table (Bob's beside it, sharing one plain text); the texts Alice ever had."""
    edited = memory(f"alice prefers {OLD} tea")
    superseded = memory(f"alice lives near {SUPERSEDED}")
    live = memory(f"{LIVE} and the password hint", metadata={"note": META})
    shared = memory("likes green tea")
    bobs = [memory(f"bob note {i} about cooking", BOB) for i in range(300)] + [memory("likes green tea", BOB)]
    name = Entity(id=new_id(), scope=ALICE, name=NAME, type="person", aliases=(ALIAS,), created_at=T0, updated_at=T0)
    job = Job(id=new_id(), kind="extract", scope=ALICE, status=JobStatus.QUEUED, message_ids=(), created_at=T0,
              updated_at=T0)  # fmt: skip
    every_text = [edited.text, superseded.text, live.text, shared.text, NAME, ALIAS, f"raw {TURN}"]
    store.write(
        WriteBatch(
            messages=[(Message(role="user", content=f"raw {TURN}", timestamp=T0), ALICE)],
            inserts=[edited, superseded, live, shared, *bobs],
            history=[event(m, HistoryAction.ADD, None, m.text) for m in (edited, superseded, live, shared)],
            vectors=[(m.id, vector(i)) for i, m in enumerate([edited, superseded, live, shared, *bobs])],
            cache_entries=[(text_hash(text), vector(i)) for i, text in enumerate(every_text)],
            embedding_id=EMBEDDING,
            entities=[name],
            entity_vectors=[(name.id, vector(99))],
            jobs=[job],
        )
    )
    later = T0 + timedelta(minutes=1)
    rewritten = edited.model_copy(update={"text": "alice prefers coffee", "updated_at": later})
    replacement = memory("alice lives in a new town", created_at=later, updated_at=later)
    store.write(
        WriteBatch(
            replacements=[(rewritten, edited.updated_at)],
            inserts=[replacement],
            status_changes=[StatusChange(superseded.id, ALICE, MemoryStatus.SUPERSEDED, later)],
            history=[event(edited, HistoryAction.UPDATE, edited.text, rewritten.text)],
            job_updates=[JobUpdate(job.id, JobStatus.FAILED, later, error=OUTPUT, raw_output=f"{{{OUTPUT}}}")],
        )
    )
    return [*every_text, index_text(rewritten), replacement.text]


def test_erase_scope_leaves_no_trace_of_the_user(store: Store) -> None:
    texts = fill(store)
    assert sorted(store.find_traces(MARKERS)) == sorted(MARKERS)  # the scan sees every marker while it is there

    deleted = store.erase_scope(ALICE)

    assert deleted["memories"] == 5 and deleted["messages"] == 1 and deleted["entities"] == 1
    assert store.find_traces(MARKERS) == {}
    assert not any(store.count_scope_rows(ALICE).values())
    # Every text Alice ever had lost its cached embedding, the shared one too (see storage/sql/erase.py).
    assert store.cached_vectors(EMBEDDING, [text_hash(text) for text in texts]) == {}
    # Bob keeps everything, and his rows are still found both ways.
    assert store.count(BOB, Filters()) == 301
    assert len(store.keyword_search(BOB, keyword_tokens("cooking"), Filters(), 500)) == 300
    assert len(store.vector_search(BOB, vector(4), Filters(), 5)) == 5
    if isinstance(store, SQLiteStore):
        assert_absent_from_files(store.path, MARKERS)


def assert_absent_from_files(path: Path, markers: list[str]) -> None:
    """Independent of find_traces: the raw bytes of the file and its WAL, and every FTS5 shadow table."""
    for file in (path, Path(f"{path}-wal")):
        data = file.read_bytes() if file.exists() else b""
        assert [m for m in markers if m.encode() in data] == [], file
    with sqlite3.connect(path) as conn:
        for table in ("memory_fts_data", "memory_fts_content", "memory_fts_docsize", "memory_fts_idx"):
            cells = b"".join(
                value if isinstance(value, bytes) else str(value).encode()
                for row in conn.execute(f"SELECT * FROM {table}")
                for value in row
                if value is not None
            )
            assert [m for m in markers if m.encode() in cells] == [], table


def test_purge_removes_keyword_entries_history_and_cached_vectors(store: Store) -> None:
    gone, kept = memory(f"the {LIVE} note"), memory("an ordinary note")
    store.write(WriteBatch(inserts=[gone, kept], history=[event(gone, HistoryAction.ADD, None, gone.text)],
                           cache_entries=[(text_hash(gone.text), vector(1))], embedding_id=EMBEDDING))  # fmt: skip
    assert store.purge(ALICE, [gone.id]) == 1
    assert store.find_traces([LIVE]) == {} and store.history(ALICE, gone.id) == []
    assert store.cached_vectors(EMBEDDING, [text_hash(gone.text)]) == {}
    assert [hit.memory_id for hit in store.keyword_search(ALICE, keyword_tokens("note"), Filters(), 10)] == [kept.id]
    if isinstance(store, SQLiteStore):
        assert_absent_from_files(store.path, [LIVE])


def test_compact_rewrites_free_space_left_by_an_older_writer(tmp_path: Path) -> None:
    """A database written before secure_delete was on keeps deleted bytes in free space until VACUUM."""
    path = tmp_path / "old.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA secure_delete = OFF")
        conn.execute("INSERT INTO meta (key, value) VALUES ('note', ?)", (f"{OLD} " * 200,))
        conn.commit()
        conn.execute("DELETE FROM meta WHERE key = 'note'")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store = SQLiteStore(path)
    assert store.find_traces([OLD]) == {OLD: ["database file"]}
    store.compact()
    assert store.find_traces([OLD]) == {}
    store.close()
