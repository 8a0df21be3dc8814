"""Several processes writing one SQLite file: no lock error reaches a caller, no write is lost."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from memstrata import Memory

PROCESSES = 4
ADDS = 250


def _writer(path: str, worker: int, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    errors: list[str] = []
    ids: list[str] = []
    with Memory.from_config({"store": {"path": path}}) as memory:
        for i in range(ADDS):
            try:
                result = memory.add(f"worker {worker} fact {i}: 进程 {worker} 的第 {i} 条记忆", user_id=f"w{worker}")
                ids.extend(event.id for event in result.results)
                if i % 25 == 0:
                    memory.search(f"fact {i}", user_id=f"w{worker}", limit=3)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    results.put((worker, ids, errors))


@pytest.mark.slow
def test_four_processes_adding_at_once(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    context = multiprocessing.get_context("spawn")
    results: multiprocessing.Queue = context.Queue()  # type: ignore[type-arg]
    workers = [context.Process(target=_writer, args=(path, w, results)) for w in range(PROCESSES)]
    for process in workers:
        process.start()
    reports = [results.get(timeout=300) for _ in workers]
    for process in workers:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert all(not errors for _, _, errors in reports), [e for _, _, errors in reports for e in errors][:5]
    with Memory.from_config({"store": {"path": path}}) as memory:
        for worker, ids, _ in reports:
            stored = memory.get_all(user_id=f"w{worker}", limit=10_000)
            assert len(ids) == ADDS
            assert {item.id for item in stored} == set(ids)
            assert memory.stats(user_id=f"w{worker}").vectors == ADDS
