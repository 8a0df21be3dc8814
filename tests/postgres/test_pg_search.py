"""Dense search on pgvector: the HNSW index is used for big scopes, filters never starve the result,
and the ranking agrees with exact cosine search."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import psycopg

from memstrata.query import Filters
from memstrata.storage.postgres.store import PostgresStore
from memstrata.storage.protocol import WriteBatch
from memstrata.types import MemoryItem, Scope, new_id

DIMS = 32
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _memories(scope: Scope, count: int) -> list[MemoryItem]:
    return [
        MemoryItem(
            id=new_id(), scope=scope, kind="fact", text=f"memory {i}", created_at=T0, updated_at=T0, valid_from=T0
        )
        for i in range(count)
    ]


def _unit(rows: int, rng: np.random.Generator) -> np.ndarray:
    vectors = rng.standard_normal((rows, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_filtered_hnsw_search_is_complete_and_close_to_exact(pg_url: str) -> None:
    rng = np.random.default_rng(11)
    store = PostgresStore(pg_url)
    big, small = Scope(user_id="big"), [Scope(user_id=f"small{i}") for i in range(8)]
    items = _memories(big, 2000) + [m for scope in small for m in _memories(scope, 5)]
    vectors = _unit(len(items), rng)
    store.write(WriteBatch(inserts=items, vectors=list(zip([m.id for m in items], vectors, strict=True)),
                           embedding_id=f"random:{DIMS}"))  # fmt: skip
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ANALYZE")
    by_id = {m.id: (m, v) for m, v in zip(items, vectors, strict=True)}

    def exact(scope: Scope, query: np.ndarray, k: int) -> list[str]:
        candidates = [(float(v @ query), m.id) for m, v in by_id.values() if m.scope == scope]
        return [memory_id for _, memory_id in sorted(candidates, reverse=True)[:k]]

    recalls = []
    for query in _unit(20, rng):
        hits = store.vector_search(big, query, Filters(), 10)
        assert len(hits) == 10 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(by_id[h.memory_id][0].scope == big for h in hits)
        assert abs(hits[0].score - float(by_id[hits[0].memory_id][1] @ query)) < 1e-5  # cosine, not distance
        recalls.append(len({h.memory_id for h in hits} & set(exact(big, query, 10))) / 10)
        for scope in small[:3]:  # 5 of 2,040 rows pass this filter: still all 5, in exact order
            assert [h.memory_id for h in store.vector_search(scope, query, Filters(), 10)] == exact(scope, query, 10)
    assert float(np.mean(recalls)) >= 0.9

    with psycopg.connect(pg_url) as conn:
        plan = "\n".join(
            str(row[0])
            for row in conn.execute(
                "EXPLAIN SELECT m.id FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq "
                f"WHERE vector_dims(v.embedding) = {DIMS} AND m.tenant_id = '' AND m.user_id = 'big' "
                f"ORDER BY (v.embedding::vector({DIMS})) <=> (SELECT embedding FROM memory_vectors LIMIT 1) LIMIT 10"
            ).fetchall()
        )
    assert f"memory_vectors_hnsw_{DIMS}" in plan
    store.close()
