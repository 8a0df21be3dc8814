"""Past one machine: two ``memstrata serve`` processes on one PostgreSQL database (as behind a load balancer).

Each worker sees what the other wrote, concurrent writes through both lose nothing, and the shared job queue
hands every extraction job to exactly one process (``claim_jobs`` under a transaction-scoped advisory lock; a
job's results are committed with a guard on its attempt, so no job is applied twice)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from support_workers import free_port

TALKERS = 6


def start_worker(url: str, directory: Path, number: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        "OPENBLAS_NUM_THREADS": "1",
        "MEMSTRATA_LLM__PROVIDER": "rules",
    }  # the bundled 1.5B model would take minutes per job on 2 cores
    log = (directory / f"worker{number}.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "memstrata", "--db", url, "serve", "--port", str(port), "--allow-anonymous-loopback",
         "--keys", str(directory / "keys.db")],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=directory,
    )  # fmt: skip
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture
def workers(tmp_path: Path, postgres_databases: Any, request: pytest.FixtureRequest) -> Iterator[list[str]]:
    url = postgres_databases.create(request.node.nodeid)
    started = [start_worker(url, tmp_path, number) for number in range(2)]
    try:
        deadline = time.monotonic() + 120
        for process, base in started:
            while True:
                assert process.poll() is None, (tmp_path / "worker0.log").read_text(errors="replace")[-2000:]
                try:
                    if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "a worker did not become ready in 120 s"
                time.sleep(0.2)
        yield [base for _, base in started]
    finally:
        for process, _ in started:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.mark.slow
def test_two_workers_on_one_database_share_memories_and_the_job_queue(workers: list[str]) -> None:
    def add(i: int) -> str:
        body = {"user_id": "u", "text": f"fact {i}: worker {i % 2} stored this in city {i}"}
        response = httpx.post(f"{workers[i % 2]}/v1/memories", json=body, timeout=60)
        response.raise_for_status()
        return str(response.json()["results"][0]["id"])

    with ThreadPoolExecutor(8) as pool:  # writes through both workers at once
        ids = set(pool.map(add, range(40)))
    assert len(ids) == 40
    for base in workers:  # each worker reads what both wrote
        listed = httpx.get(f"{base}/v1/memories", params={"user_id": "u", "limit": 100}, timeout=60).json()
        assert {item["id"] for item in listed["items"]} == ids
        hits = httpx.post(f"{base}/v1/memories/search", json={"user_id": "u", "query": "city 17"}, timeout=60).json()
        assert any("city 17" in hit["memory"]["text"] for hit in hits)

    def converse(i: int) -> None:  # turns with infer: a job each, queued in the shared table
        turns = [{"role": "user", "content": f"My name is Person{i} and I live in Town{i}."}]
        body = {"user_id": f"talker{i}", "messages": turns, "infer": True}
        httpx.post(f"{workers[i % 2]}/v1/memories", json=body, timeout=60).raise_for_status()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(converse, range(TALKERS)))
    jobs: list[dict[str, Any]] = []
    for i in range(TALKERS):  # a waiting job is run now by the worker asked; queued ones by either process
        flushed = httpx.post(
            f"{workers[(i + 1) % 2]}/v1/jobs/flush", params={"user_id": f"talker{i}"}, json={}, timeout=300
        )
        flushed.raise_for_status()
        jobs.extend(flushed.json())
    assert len(jobs) == TALKERS and all(job["status"] == "done" for job in jobs), jobs
    assert all(job["attempts"] == 1 for job in jobs)  # claimed once, by one process
    for i in range(TALKERS):
        found = httpx.get(f"{workers[1]}/v1/memories", params={"user_id": f"talker{i}", "limit": 100}, timeout=60)
        stored = [(item["kind"], item["text"]) for item in found.json()["items"]]
        assert len(stored) == len(set(stored)) and any(kind != "episode" for kind, _ in stored)  # applied once
