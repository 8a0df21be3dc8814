"""What a SQLite store keeps on disk (issue 20: bytes per memory): memory vectors as tagged float16, stores
written before that (float32 BLOBs) still read and searched, and a WAL emptied after a big batch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memstrata.query import Filters
from memstrata.storage import vector_blobs
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import MemoryItem, Scope, new_id, utcnow

SCOPE = Scope(user_id="u")
DIMS = 64


def unit_vectors(count: int, seed: int = 7) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def add(store: SQLiteStore, vectors: np.ndarray, prefix: str = "m") -> list[str]:
    now = utcnow()
    items = [MemoryItem(id=new_id(), scope=SCOPE, kind="fact", text=f"{prefix} {i}", created_at=now, updated_at=now,
                        valid_from=now) for i in range(len(vectors))]  # fmt: skip
    ids = [item.id for item in items]
    store.write(WriteBatch(inserts=items, vectors=list(zip(ids, vectors, strict=True)), embedding_id=f"t:{DIMS}"))
    return ids


def blobs(store: SQLiteStore) -> list[bytes]:
    return [row[0] for row in store.dialect.read(lambda tx: tx.execute("SELECT vector FROM memory_vectors").fetchall())]


def test_vectors_are_stored_as_float16_and_score_within_float16_precision(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    vectors = unit_vectors(50)
    ids = add(store, vectors)
    stored = blobs(store)
    assert all(blob[:4] == vector_blobs.HALF_TAG and len(blob) == 4 + 2 * DIMS for blob in stored)
    hits = store.vector_search(SCOPE, vectors[3], Filters(), 5)
    assert hits[0].memory_id == ids[3]
    exact = {ids[i]: float(vectors[i] @ vectors[3]) for i in range(len(ids))}
    assert all(hit.score == pytest.approx(exact[hit.memory_id], abs=1e-3) for hit in hits)
    store.close()


def test_a_provenance_is_stored_without_its_defaults(tmp_path: Path) -> None:
    """An API add's provenance is "{}" on disk, not 68 bytes of nulls and empty lists, and reads back whole."""
    store = SQLiteStore(tmp_path / "m.db")
    [memory_id] = add(store, unit_vectors(1))
    stored = store.dialect.read(lambda tx: tx.execute("SELECT provenance FROM memories").fetchall())
    assert stored == [("{}",)]
    [item] = store.get(SCOPE, [memory_id])
    assert item.provenance.source == "api" and item.provenance.message_ids == ()
    store.close()


def test_float32_rows_of_an_older_store_are_read_beside_new_float16_ones(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    old_vectors, new_vectors = unit_vectors(20, seed=1), unit_vectors(20, seed=2)
    old_ids = add(store, old_vectors, "old")
    store.dialect.transaction(lambda tx: tx.executemany(  # as a store written before float16 holds them
        "UPDATE memory_vectors SET vector = ? WHERE memory_seq = (SELECT seq FROM memories WHERE id = ?)",
        [(vector.astype("<f4").tobytes(), memory_id) for memory_id, vector in zip(old_ids, old_vectors, strict=True)],
    ))  # fmt: skip
    store.close()

    reopened = SQLiteStore(tmp_path / "m.db")  # its vector index rebuilt from both kinds of rows
    new_ids = add(reopened, new_vectors, "new")
    assert sorted(len(blob) for blob in blobs(reopened)) == [4 + 2 * DIMS] * 20 + [4 * DIMS] * 20
    for ids, vectors in ((old_ids, old_vectors), (new_ids, new_vectors)):
        for i in (0, 7, 19):
            top = reopened.vector_search(SCOPE, vectors[i], Filters(), 3)[0]
            assert top.memory_id == ids[i] and top.score == pytest.approx(1.0, abs=1e-3)
    reopened.close()


def test_components_float16_cannot_hold_stay_float32() -> None:
    large = np.array([70_000.0, -1.0, 0.5], dtype=np.float32)
    assert vector_blobs.decode(vector_blobs.encode(large)).tolist() == large.tolist()
    small = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    assert vector_blobs.encode(small)[:4] == vector_blobs.HALF_TAG
    assert np.allclose(vector_blobs.decode(vector_blobs.encode(small)), small, atol=1e-4)


def test_many_blobs_decode_as_one_matrix_of_what_each_decodes_to() -> None:
    rng = np.random.default_rng(3)
    halves = [vector_blobs.encode(row) for row in rng.normal(0, 0.05, (5, DIMS)).astype(np.float32)]
    wide = np.ascontiguousarray(rng.normal(0, 1, DIMS), dtype="<f4").tobytes()  # an untagged float32 row
    for blobs in (halves, [*halves[:2], wide, memoryview(halves[2])]):
        matrix = vector_blobs.decode_rows(blobs)
        assert matrix.dtype == np.float32
        assert np.array_equal(matrix, np.stack([vector_blobs.decode(blob) for blob in blobs]))
    assert vector_blobs.decode_rows([]).shape == (0, 0)


def test_the_wal_is_emptied_right_after_a_large_transaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    chunk = b"x" * 100_000
    store.dialect.transaction(lambda tx: tx.executemany(  # ~40 MB in one transaction: a WAL well past the limit
        "INSERT INTO meta (key, value) VALUES (?, ?)", [(f"big{i}", chunk) for i in range(400)]
    ))  # fmt: skip
    wal = tmp_path / "m.db-wal"
    assert wal.stat().st_size == 0  # not left at 40 MB until some later write
    kept = store.dialect.read(lambda tx: tx.execute("SELECT count(*) FROM meta WHERE key LIKE 'big%'").fetchone())
    assert kept == (400,)  # checkpointed into the database, not lost
    store.close()


def test_a_wal_grown_past_the_shrink_size_is_emptied_after_the_commit_without_waiting_for_readers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import's WAL is emptied as soon as no reader holds an older snapshot; while one does, the commit
    returns without waiting (the checkpoint gives up) and a later commit empties it."""
    import sqlite3
    import time

    from memstrata.storage.sqlite import connection

    monkeypatch.setattr(connection, "WAL_SHRINK_AT", 256 * 1024)
    path, wal = tmp_path / "m.db", tmp_path / "m.db-wal"
    store = SQLiteStore(path, busy_timeout_s=30)
    ids = add(store, unit_vectors(2_000))  # ~0.5 MB of rows
    assert wal.stat().st_size == 0
    reader = sqlite3.connect(path)
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM memories").fetchone() == (2_000,)  # holds this snapshot
    began = time.monotonic()
    add(store, unit_vectors(2_000, seed=8), "more")
    assert time.monotonic() - began < 10  # not the 30 s busy timeout
    assert wal.stat().st_size > 256 * 1024
    reader.execute("COMMIT")
    reader.close()
    add(store, unit_vectors(1, seed=9), "last")
    assert wal.stat().st_size == 0
    assert store.vector_search(SCOPE, unit_vectors(2_000)[5], Filters(), 1)[0].memory_id == ids[5]
    store.close()
