"""The SQLite vector index at scale: the HNSW graph against exact search on real embeddings, its files beside
the store (reopened, refused when stale or damaged), and a process killed with SIGKILL while it writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.query import Filters
from memstrata.storage import index_files, vector_blobs
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import HistoryAction, HistoryEvent, MemoryItem, Scope, new_id, utcnow

LOCOMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "locomo10.json"
EMBEDDING = "use-multilingual-v3:512"


def item(text: str, scope: Scope) -> MemoryItem:
    now = utcnow()
    return MemoryItem(id=new_id(), scope=scope, kind="fact", text=text, created_at=now, updated_at=now, valid_from=now)


def put(store: SQLiteStore, items: list[MemoryItem], vectors: np.ndarray, embedding: str = EMBEDDING) -> None:
    history = [
        HistoryEvent(id=new_id(), memory_id=i.id, scope=i.scope, action=HistoryAction.ADD, old_text=None,
                     new_text=i.text, actor="test", reason=None, created_at=i.created_at)
        for i in items
    ]  # fmt: skip
    pairs = list(zip([i.id for i in items], vectors, strict=True))
    store.write(WriteBatch(inserts=items, history=history, vectors=pairs, embedding_id=embedding))


def exact(vectors: np.ndarray, query: np.ndarray, k: int) -> list[int]:
    scores = vectors @ query / np.linalg.norm(vectors, axis=1) / np.linalg.norm(query)
    return list(np.argsort(-scores, kind="stable")[:k])


@pytest.fixture(scope="module")
def locomo() -> tuple[list[str], list[str]]:
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo is not at {LOCOMO}")
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    turns = [t["text"] for sample in data for key, session in sample["conversation"].items()
             if key.startswith("session_") and isinstance(session, list) for t in session]  # fmt: skip
    questions = [qa["question"] for sample in data for qa in sample["qa"]]
    return turns[:900], questions[::37][:40]


def test_graph_recall_against_exact_on_real_embeddings(
    tmp_path: Path, embedder: UniversalSentenceEncoder, locomo: tuple[list[str], list[str]]
) -> None:
    turns, questions = locomo
    vectors, queries = embedder.embed_batch(turns), embedder.embed_batch(questions)
    scopes = [Scope(user_id="alice") if i % 3 else Scope(user_id="bob") for i in range(len(turns))]
    items = [item(text, scope) for text, scope in zip(turns, scopes, strict=True)]
    store = SQLiteStore(tmp_path / "m.db", ann_min_rows=0)  # every search through the graph
    put(store, items, vectors)
    assert store.wait_for_vector_index(60) and store.vector_index_stats()["graph_rows"] == len(turns)
    found = total = 0
    for query in queries:
        for user in ("alice", "bob"):
            mine = np.array([i for i, s in enumerate(scopes) if s.user_id == user])
            truth = {items[mine[i]].id for i in exact(vectors[mine], query, 10)}
            hits = store.vector_search(Scope(user_id=user), query, Filters(), 10)
            assert {h.memory_id for h in hits} <= {items[i].id for i in mine}  # never another scope's row
            found += len(truth & {h.memory_id for h in hits})
            total += 10
    assert found / total >= 0.98, found / total
    store.close()


def test_the_writing_process_searches_the_saved_files_after_a_build(tmp_path: Path) -> None:
    """The process that built the graph kept it and its int8 rows in its own memory (~700 MB at a million rows)
    beside the files it saved; it now maps the saved files as a new process does, and what it writes after the
    build is still found."""
    rng = np.random.default_rng(5)
    store = SQLiteStore(tmp_path / "m.db", ann_min_rows=0)
    items = [item(f"note {i}", Scope(user_id="u")) for i in range(300)]
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    put(store, items, vectors, "test:16")
    store.vector_search(Scope(user_id="u"), vectors[0], Filters(), 5)  # builds the graph inline and saves it
    assert store.wait_for_vector_index(30)
    keeper = store._vectors
    assert keeper._index is not None and keeper._index.ann is not None
    assert keeper._index.ann._index.get(np.uint64(0)) is None  # the mapped graph file, not the one built here
    later = [item("a later note", Scope(user_id="u"))]
    later_vector = rng.standard_normal((1, 16)).astype(np.float32)
    put(store, later, later_vector, "test:16")
    for query, wanted in ((vectors[7], items[7].id), (later_vector[0], later[0].id)):
        assert store.vector_search(Scope(user_id="u"), query, Filters(), 5)[0].memory_id == wanted
    store.close()


def test_the_index_is_persisted_reopened_and_refused_when_stale(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    path = tmp_path / "m.db"
    store = SQLiteStore(path, ann_min_rows=0)
    items = [item(f"note {i}", Scope(user_id="u")) for i in range(300)]
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    put(store, items, vectors, "test:16")
    store.wait_for_vector_index(30)
    state = index_files.read_state(index_files.directory_for(path))
    assert state is not None and state["rows"] == 300 and state["graph_rows"] == 300
    store.close()

    def top(store: SQLiteStore, query: np.ndarray) -> list[str]:
        return [hit.memory_id for hit in store.vector_search(Scope(user_id="u"), query, Filters(), 5)]

    expected = [items[i].id for i in exact(vectors, vectors[3], 5)]
    reopened = SQLiteStore(path, ann_min_rows=0)
    assert top(reopened, vectors[3]) == expected
    assert reopened.vector_index_stats()["rows"] == 300
    reopened.close()

    # A damaged file is refused (its checksum), and the index is rebuilt from the database. The graph file is
    # the one that holds the rows here: the graph covers all of them.
    assert state["files"]["rows"]["bytes"] == 0
    graph = index_files.directory_for(path) / state["files"]["graph"]["name"]
    graph.write_bytes(bytes(graph.stat().st_size))
    reopened = SQLiteStore(path, ann_min_rows=0)
    assert top(reopened, vectors[3]) == expected
    reopened.close()

    # Files of another database (a copy's store_id differs) are never used for this one.
    folder = index_files.directory_for(path)
    state = index_files.read_state(folder)
    assert state is not None
    (folder / "state.json").write_text(json.dumps({**state, "store_id": "someone-else"}))
    reopened = SQLiteStore(path, ann_min_rows=0)
    assert top(reopened, vectors[3]) == expected
    reopened.close()


_WRITER = """
import sys, numpy as np
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.query import Filters
from memstrata.types import MemoryItem, Scope, new_id, utcnow
store = SQLiteStore(sys.argv[1], ann_min_rows=0)
rng = np.random.default_rng(int(sys.argv[2]))
scope = Scope(user_id="u")
for round in range(10_000):
    now = utcnow()
    items = [MemoryItem(id=new_id(), scope=scope, kind="fact", text=f"r{round} {i}", created_at=now, updated_at=now,
                        valid_from=now) for i in range(40)]
    vectors = rng.standard_normal((40, 16)).astype(np.float32)
    store.write(WriteBatch(inserts=items, vectors=list(zip([i.id for i in items], vectors)), embedding_id="test:16"))
    if round % 3 == 0:
        store.purge(scope, [items[0].id, items[1].id])  # hard deletes: removals the index must follow
    store.vector_search(scope, vectors[5], Filters(), 10)  # syncs, rebuilds and persists the graph
    print(round, flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_process_killed_while_writing_leaves_no_wrong_answers(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(seed)], stdout=subprocess.PIPE, env=env)
    assert writer.stdout is not None
    while int(writer.stdout.readline() or b"-1") < 5 + seed:  # a few persisted generations first
        assert writer.poll() is None
    time.sleep(0.05 * seed)
    writer.send_signal(signal.SIGKILL)
    writer.wait()

    store = SQLiteStore(path, ann_min_rows=0)
    live = store.dialect.read(lambda tx: tx.execute(
        "SELECT m.id, v.vector FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq ORDER BY m.seq"
    ).fetchall())  # fmt: skip
    ids = [row[0] for row in live]
    vectors = np.stack([vector_blobs.decode(row[1]) for row in live])
    found = 0
    for q in range(0, len(ids), max(1, len(ids) // 40)):
        hits = store.vector_search(Scope(user_id="u"), vectors[q], Filters(), 10)
        truth = [ids[i] for i in exact(vectors, vectors[q], 10)]
        assert hits[0].memory_id == ids[q]  # every committed row is found, the last ones too
        assert {h.memory_id for h in hits} <= set(ids)  # no purged row comes back
        for hit in hits:  # every score is the exact cosine of the stored vector
            v = vectors[ids.index(hit.memory_id)]
            assert hit.score == pytest.approx(float(v @ vectors[q] / np.linalg.norm(v) / np.linalg.norm(vectors[q])),
                                              abs=1e-5)  # fmt: skip
        found += len(set(truth) & {h.memory_id for h in hits})
    assert found >= 0.95 * 10 * len(range(0, len(ids), max(1, len(ids) // 40)))
    store.close()


def test_memstrata_loads_usearch_only_when_an_index_is_used() -> None:
    """usearch loaded before onnxruntime (imported by MarkItDown's magika in the document converter's child
    process, which imports memstrata first) crashes that import; so importing memstrata must not load usearch."""

    import importlib.util

    if importlib.util.find_spec("markitdown") is None:  # not imported here: this process has usearch loaded
        pytest.skip("the ingest extra is not installed")
    script = (
        "import sys, numpy as np, memstrata, memstrata.knowledge.sandbox\n"
        "assert 'usearch.index' not in sys.modules, 'usearch loaded with memstrata'\n"
        "import markitdown\n"  # onnxruntime first, as in the converter's child
        "from memstrata.storage.compact_rows import exact_top, quantize\n"
        "rows = quantize(np.eye(4, dtype=np.float32))\n"
        "print(exact_top(rows, rows[:1], 1)[0].tolist())\n"
    )
    import memstrata

    source = str(Path(memstrata.__file__).resolve().parents[1])  # the code under test, in the child too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[0]"


def test_a_cached_filter_mask_follows_every_change_of_the_rows() -> None:
    """Masks of recent filters are reused between searches; removals, status changes and new rows must
    show in the very next search."""
    from memstrata.storage.vector_index import IndexFilter, IndexRow, VectorIndex

    rng = np.random.default_rng(4)
    vectors = rng.standard_normal((5, 8)).astype(np.float32)
    index = VectorIndex(8)
    index.upsert(IndexRow(seq, "", "lin", "", "", "active", "fact", vectors[seq]) for seq in range(4))
    lin = IndexFilter(tenant_id="", user_id="lin", agent_id=None, session_id=None, statuses=["active"], kinds=None)

    def seqs() -> set[int]:
        return {seq for seq, _ in index.search(vectors[0], lin, 10, ann_min_rows=10**6)}

    assert seqs() == {0, 1, 2, 3}
    assert seqs() == {0, 1, 2, 3}  # answered with the cached mask
    index.remove([1])
    assert seqs() == {0, 2, 3}
    index.update_attributes(2, status="archived", kind="fact")
    assert seqs() == {0, 3}
    index.upsert([IndexRow(3, "", "sam", "", "", "active", "fact", vectors[3])])  # moved to another user
    index.upsert([IndexRow(4, "", "lin", "", "", "active", "fact", vectors[4])])
    assert seqs() == {0, 4}


def test_more_users_than_a_narrow_code_holds_still_filter_exactly() -> None:
    """Scope codes start as int16; the 32,768th distinct user widens them, and every user's rows stay theirs,
    in the vector index and in a table restored from an older file's int64 seqs and int32 codes."""
    from memstrata.storage.row_table import ATTRS, RowTable
    from memstrata.storage.vector_index import IndexFilter, IndexRow, VectorIndex

    users = 40_000
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((users, 8)).astype(np.float32)
    index = VectorIndex(8)
    index.upsert(IndexRow(seq, "", f"user-{seq}", "", "", "active", "fact", vectors[seq]) for seq in range(users))

    def only(user: int, table: RowTable) -> list[int]:
        where = IndexFilter(tenant_id="", user_id=f"user-{user}", agent_id=None, session_id=None,
                            statuses=["active"], kinds=None)  # fmt: skip
        return [int(table.seqs[p]) for p in np.flatnonzero(table.mask(where, table.size))]

    table = index._table
    assert table.attrs.dtype == np.int32
    for user in (0, 32_766, 32_767, 32_768, users - 1):
        assert only(user, table) == [user]
        assert [seq for seq, _ in index.search(vectors[user], IndexFilter(
            tenant_id="", user_id=f"user-{user}", agent_id=None, session_id=None, statuses=["active"], kinds=None,
        ), 10, ann_min_rows=10**6)] == [user]  # fmt: skip
    seqs, attrs, codes = table.snapshot()
    restored = RowTable.restore(seqs.astype(np.int64), attrs.astype(np.int32), codes)
    assert restored.attrs.dtype == np.int32 and restored.seqs.dtype == np.int32
    assert only(users - 1, restored) == [users - 1]
    narrow = RowTable.restore(np.arange(3, dtype=np.int64), np.zeros((3, len(ATTRS)), dtype=np.int32),
                              {name: [""] for name in ATTRS})  # fmt: skip
    assert narrow.attrs.dtype == np.int16


def test_a_saved_index_keeps_one_copy_of_each_row_and_reopens_to_the_same_rows(tmp_path: Path) -> None:
    """The graph file holds the int8 rows it was built from, in the order its threads inserted them; the rows
    file holds only rows changed since the build and rows added after it. Reopened, every position reads its
    own current row and searches rank as before the save."""
    from memstrata.storage.ann import AnnGraph
    from memstrata.storage.index_files import Origin
    from memstrata.storage.vector_index import IndexFilter, IndexRow, VectorIndex

    dims, built, rng = 32, 3_000, np.random.default_rng(11)
    vectors = rng.standard_normal((built + 200, dims)).astype(np.float32)
    index = VectorIndex(dims)
    index.upsert(IndexRow(seq, "", "u", "", "", "active", "fact", vectors[seq]) for seq in range(built))
    rows, size, tick = index.graph_input()
    graph = AnnGraph.build(rows, size, threads=lambda: 2)
    assert graph is not None
    index.adopt(graph, started_at=tick)
    changed = [5, 1_234, 2_999]
    for seq in changed:  # a new vector for a row in the graph: the graph keeps the old one
        vectors[seq] = rng.standard_normal(dims).astype(np.float32)
        index.upsert([IndexRow(seq, "", "u", "", "", "active", "fact", vectors[seq])])
    index.upsert(IndexRow(seq, "", "u", "", "", "active", "fact", vectors[seq]) for seq in range(built, built + 200))
    folder = tmp_path / "index"
    index_files.save(folder, index.snapshot(), Origin("store", "test:32", "0", rev=1), file_mode=None)

    state = index_files.read_state(folder)
    assert state is not None and state["format"] == 2
    assert state["files"]["rows"]["bytes"] == (len(changed) + 200) * dims  # not the 3,000 rows the graph holds
    loaded = index_files.load(folder, Origin("store", "test:32", "0", rev=1))
    assert loaded is not None
    reopened = loaded[0]
    assert reopened.rows.slots is not None and not np.array_equal(reopened.rows.slots, np.arange(built))
    everything = np.arange(built + 200, dtype=np.int64)
    assert np.array_equal(reopened.rows.gather(everything), index.rows.gather(everything))
    assert reopened.ann is not None and reopened.ann._index.get(np.uint64(0)) is None  # mapped without a key table
    where = IndexFilter(tenant_id="", user_id="u", agent_id=None, session_id=None, statuses=["active"], kinds=None)
    for seq in [*changed, 0, 777, built + 50]:
        found = reopened.search(vectors[seq], where, 5, ann_min_rows=0)
        assert found[0][0] == seq
        assert found == index.search(vectors[seq], where, 5, ann_min_rows=0)


def test_a_graph_file_of_another_layout_is_not_read_for_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Should a usearch release write its files another way, the rows inside cannot be found; the save then
    keeps every row in the rows file, as format 1 did, and the index reopens to the same rows."""
    from memstrata.storage import ann
    from memstrata.storage.index_files import Origin
    from memstrata.storage.vector_index import IndexRow, VectorIndex

    def unknown_layout(path: Path, size: int, dims: int) -> np.ndarray:
        raise ValueError("its nodes do not end where the file does")

    monkeypatch.setattr(ann, "saved_keys", unknown_layout)
    vectors = np.random.default_rng(12).standard_normal((500, 16)).astype(np.float32)
    index = VectorIndex(16)
    index.upsert(IndexRow(seq, "", "u", "", "", "active", "fact", vectors[seq]) for seq in range(500))
    rows, size, tick = index.graph_input()
    graph = ann.AnnGraph.build(rows, size, threads=lambda: 2)
    assert graph is not None
    index.adopt(graph, started_at=tick)
    folder = tmp_path / "index"
    index_files.save(folder, index.snapshot(), Origin("store", "test:16", "0", rev=1), file_mode=None)
    state = index_files.read_state(folder)
    assert state is not None and state["files"]["rows"]["bytes"] == 500 * 16
    loaded = index_files.load(folder, Origin("store", "test:16", "0", rev=1))
    assert loaded is not None and loaded[0].rows.slots is None
    everything = np.arange(500, dtype=np.int64)
    assert np.array_equal(loaded[0].rows.gather(everything), index.rows.gather(everything))
    # Files written before format 2 have this layout too, and still open (a million rows need no rebuild).
    (folder / "state.json").write_text(json.dumps({**state, "format": 1}))
    older = index_files.load(folder, Origin("store", "test:16", "0", rev=1))
    assert older is not None and np.array_equal(older[0].rows.gather(everything), index.rows.gather(everything))


_EXIT_WHILE_BUILDING = """
import sys, numpy as np
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.query import Filters
from memstrata.types import MemoryItem, Scope, new_id, utcnow
store = SQLiteStore(sys.argv[1], ann_min_rows=1000)
scope, now = Scope(user_id="u"), utcnow()
rows = np.random.default_rng(3).standard_normal((12_000, 64)).astype(np.float32)
items = [MemoryItem(id=new_id(), scope=scope, kind="fact", text=f"n{i}", created_at=now, updated_at=now,
                    valid_from=now) for i in range(len(rows))]
store.write(WriteBatch(inserts=items, vectors=list(zip([i.id for i in items], rows)), embedding_id="test:64"))
print(store.vector_search(scope, rows[5], Filters(), 1)[0].memory_id == items[5].id, flush=True)
print(store.vector_index_stats()["building_graph"], flush=True)  # and exit, the graph still building, unclosed
"""


def test_a_program_exiting_while_the_graph_builds_exits_cleanly(tmp_path: Path) -> None:
    """A script that never closed its store, exiting while the graph was built on a daemon thread, was aborted
    inside usearch: "terminate called without an active exception", exit 134 (found by a hardening run after
    damaged index files were rebuilt)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run([sys.executable, "-c", _EXIT_WHILE_BUILDING, str(tmp_path / "m.db")], capture_output=True,
                          text=True, timeout=300, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]  # the answer was right, and the build was still running
