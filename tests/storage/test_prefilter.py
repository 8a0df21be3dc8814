"""Filtered vector search when the filter and the query pull apart: too few of the index's candidates pass
a metadata filter, so the rows passing it are listed in SQL once per filter (sqlite/prefilter.py) and that
list follows later writes by rev, whichever process makes them: the answers stay those of an exact search
over the rows that pass now."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memstrata.query import Filters, ListQuery, TimeRange
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sql.where import memory_where
from memstrata.storage.sqlite import prefilter
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import MemoryItem, Scope, new_id, utcnow

SCOPE, OTHER = Scope(user_id="lin"), Scope(user_id="sam")
RARE = Filters(metadata={"topic": "rare"})


def item(scope: Scope, topic: str) -> MemoryItem:
    now = utcnow()
    return MemoryItem(id=new_id(), scope=scope, kind="fact", text=f"a memory on {topic}", created_at=now,
                      updated_at=now, valid_from=now, metadata={"topic": topic})  # fmt: skip


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    reader = SQLiteStore(tmp_path / "m.db", ann_min_rows=0)  # the graph answers from the first row
    writer = SQLiteStore(tmp_path / "m.db")  # another process's writes, seen through the file
    yield reader, writer
    reader.close()
    writer.close()


def exact_rare(store: SQLiteStore, query: np.ndarray, vectors: dict[str, np.ndarray]) -> list[str]:
    rare = [m.id for m in store.list_memories(ListQuery(scope=SCOPE, filters=RARE, limit=1000))]
    return sorted(rare, key=lambda memory_id: -float(vectors[memory_id] @ query))


def test_rows_passing_a_filter_far_from_the_query_are_searched_exactly_and_followed_through_writes(
    stores: tuple[SQLiteStore, SQLiteStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    reader, writer = stores
    rng = np.random.default_rng(3)
    query = rng.normal(size=64).astype(np.float32)
    query /= np.linalg.norm(query)

    def near(sign: float) -> np.ndarray:  # close to the query (sign 1) or to its opposite (-1)
        vector = sign * query + 0.3 * rng.normal(size=64).astype(np.float32)
        return vector / np.linalg.norm(vector)

    common = [item(SCOPE, "common") for _ in range(600)]
    rare = [item(SCOPE, "rare") for _ in range(4)]
    foreign = [item(OTHER, "rare") for _ in range(20)]  # another user's rows pass the filter, never the scope
    vectors = {m.id: near(1.0) for m in common + foreign} | {m.id: near(-1.0) for m in rare}
    every = common + rare + foreign
    writer.write(WriteBatch(inserts=every, vectors=[(m.id, vectors[m.id]) for m in every], embedding_id="t:64"))

    original, catch_ups = prefilter._caught_up, []

    def counted(*args: object) -> object:
        catch_ups.append(1)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(prefilter, "_caught_up", counted)

    def found() -> list[str]:
        return [hit.memory_id for hit in reader.vector_search(SCOPE, query, RARE, 10)]

    assert found() == exact_rare(reader, query, vectors)  # the 4 rare rows, the farthest of 604
    assert found() == exact_rare(reader, query, vectors)  # the kept list: no write since, no catch-up
    assert catch_ups == []

    # Another process writes: a row joins the filter, one leaves it, one is deleted, one new row passes.
    later = utcnow() + timedelta(seconds=1)
    joined = common[0].model_copy(update={"metadata": {"topic": "rare"}, "updated_at": later})
    left = rare[0].model_copy(update={"metadata": {"topic": "common"}, "updated_at": later})
    writer.write(WriteBatch(replacements=[(joined, common[0].updated_at), (left, rare[0].updated_at)]))
    writer.purge(SCOPE, [rare[1].id])
    fresh = item(SCOPE, "rare")
    vectors[fresh.id] = near(-1.0)
    writer.write(WriteBatch(inserts=[fresh], vectors=[(fresh.id, vectors[fresh.id])], embedding_id="t:64"))

    got = found()
    assert sorted(got) == sorted([joined.id, rare[2].id, rare[3].id, fresh.id])
    assert got == exact_rare(reader, query, vectors)
    assert catch_ups == [1]  # brought up to date from the rows written since, not listed again


def test_a_time_range_lists_the_scope_by_the_event_time_index(stores: tuple[SQLiteStore, SQLiteStore]) -> None:
    """The in-range list of a query that names a time ("last spring") falls back to listing the scope's rows in
    the range: an index search (schema step 8), not a scan of the scope (0.8 s at 1M memories)."""
    reader, _ = stores
    now = utcnow()
    where = memory_where(reader.dialect, SCOPE, Filters(event_time=TimeRange(gte=now - timedelta(days=90), lt=now)))
    sql = f"EXPLAIN QUERY PLAN SELECT m.seq FROM memories m WHERE {where.sql()}"
    plan = " ".join(str(row) for row in reader.dialect.read(lambda tx: tx.execute(sql, where.params).fetchall()))
    assert "memories_event" in plan, plan
