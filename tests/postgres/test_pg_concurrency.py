"""Eight processes, 500 mixed operations each, against one PostgreSQL database: no errors, no lost
or duplicated writes, no cross-tenant reads.

Workers embed with ``HashingEmbedder`` (64 dims): the real embedder would spend the time budget
on the two CPU cores embedding text, and this test is about the store.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from typing import Any

import pytest

from memstrata import Memory, MemoryStatus
from memstrata.config import load_settings
from memstrata.storage.factory import open_store
from memstrata.testing import HashingEmbedder

PROCESSES = 8
OPERATIONS = 500
ALL_STATUSES = {"status": [status.value for status in MemoryStatus]}


def _memory(url: str) -> Memory:
    settings = load_settings({"store": {"path": url, "pool_size": 2}, "write": {"background": False}})
    return Memory(open_store(settings.store), HashingEmbedder(dims=64), settings=settings)


def _worker(url: str, worker: int, results: Any) -> None:
    """Own scope: adds, updates, deletes, searches. Shared scope (all workers of a tenant): adds."""
    rng = random.Random(worker)
    tenant, user = f"t{worker % 2}", f"u{worker // 2}"  # workers 0 and 1 share a user id, not a tenant
    expected: dict[str, dict[str, Any]] = {}
    shared: list[str] = []
    errors: list[str] = []
    started = time.perf_counter()
    with _memory(url) as root:
        memory = root.for_tenant(tenant)
        for op in range(OPERATIONS):
            try:
                live = [memory_id for memory_id, state in expected.items() if state["status"] == "active"]
                roll = rng.random()
                if roll < 0.5 or not live:
                    if op % 5 == 0:
                        shared.extend(e.id for e in memory.add(f"shared note {worker}-{op}", user_id="shared").results)
                    else:
                        text = f"worker {worker} fact {op}: 进程 {worker} 的第 {op} 条记忆"
                        [event] = memory.add(text, user_id=user).results
                        expected[event.id] = {"text": text, "status": "active", "events": 1, "updates": 0}
                elif roll < 0.7:
                    target = rng.choice(live)
                    text = f"worker {worker} updated {target[:6]} at {op}"
                    memory.update(target, text, user_id=user)
                    expected[target]["text"] = text
                    expected[target]["events"] += 1
                    expected[target]["updates"] += 1
                elif roll < 0.9:
                    for hit in memory.search(f"fact {rng.randrange(op + 1)}", user_id=user, limit=5):
                        if hit.id not in expected:
                            errors.append(f"search returned {hit.id}, not one of this worker's memories")
                else:
                    target = rng.choice(live)
                    memory.delete(target, user_id=user)
                    expected[target]["status"] = "deleted"
                    expected[target]["events"] += 1
            except Exception as exc:
                errors.append(f"op {op}: {type(exc).__name__}: {exc}")
    results.put((worker, expected, shared, errors, time.perf_counter() - started))


@pytest.mark.slow
def test_eight_processes_of_mixed_operations(pg_url: str) -> None:
    _memory(pg_url).close()  # migrate before the stampede (concurrent migration has its own test)
    context = multiprocessing.get_context("spawn")
    results: Any = context.Queue()
    started = time.perf_counter()
    workers = [context.Process(target=_worker, args=(pg_url, w, results)) for w in range(PROCESSES)]
    for process in workers:
        process.start()
    reports = [results.get(timeout=300) for _ in workers]
    elapsed = time.perf_counter() - started
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    errors = [error for *_, worker_errors, _ in reports for error in worker_errors]
    assert errors == [], errors[:5]

    with _memory(pg_url) as root:
        for worker, expected, _, _, _ in reports:
            memory = root.for_tenant(f"t{worker % 2}")
            every = memory.get_all(user_id=f"u{worker // 2}", filters=ALL_STATUSES, limit=10_000)
            # each update keeps the text it replaced as a closed version of its own (records/versions.py)
            kept = [m for m in every if "superseded_by" in m.metadata]
            stored = {m.id: m for m in every if "superseded_by" not in m.metadata}
            assert set(stored) == set(expected), f"worker {worker}: lost or foreign memories"
            assert sorted(m.metadata["superseded_by"] for m in kept) == sorted(
                memory_id for memory_id, state in expected.items() for _ in range(state["updates"])
            )
            for memory_id, state in expected.items():
                assert (stored[memory_id].text, stored[memory_id].status.value) == (state["text"], state["status"])
                assert len(memory.history(memory_id, user_id=f"u{worker // 2}")) == state["events"]
            assert memory.stats(user_id=f"u{worker // 2}").vectors == len(expected) + len(kept)
        for tenant in ("t0", "t1"):
            shared = {m.id for m in root.for_tenant(tenant).get_all(user_id="shared", limit=10_000)}
            assert shared == {i for worker, _, ids, _, _ in reports if f"t{worker % 2}" == tenant for i in ids}
    operations = PROCESSES * OPERATIONS
    print(f"\n{operations} operations by {PROCESSES} processes in {elapsed:.1f} s: {operations / elapsed:.0f} ops/s")
