"""Several processes on one store file: mixed add / search / update / delete, throughput and errors.

Each process opens its own ``Memory`` on the same SQLite file (one scope shared by all) and runs
a seeded mix of operations; it updates and deletes only memories it added itself, so a conflict
or any other exception is a real error. At the end the live count must equal
prepopulated + added - deleted (no lost writes). Vectors come from :class:`HashEmbedder`
(seeded random, no model) so the store, not the embedder, is what contends.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench import facts
from bench.embedders import HashEmbedder
from bench.metrics import percentiles
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.storage.sqlite.store import SQLiteStore

SCOPE = "shared"
MIX = (("search", 0.5), ("add", 0.25), ("update", 0.15), ("delete", 0.10))


def _memory(path: str) -> Memory:
    return Memory(SQLiteStore(path), HashEmbedder(), settings=load_settings({"store": {"path": path}}))


def _worker(args: tuple[str, int, int]) -> dict[str, Any]:
    path, worker, ops = args
    rng = random.Random(worker)
    memory = _memory(path)
    mine: list[str] = []
    latencies: dict[str, list[float]] = {name: [] for name, _ in MIX}
    errors: Counter[str] = Counter()
    added = deleted = 0
    queries = facts.queries(50, seed=worker)
    started = time.time()
    for i in range(ops):
        op = rng.choices([name for name, _ in MIX], weights=[w for _, w in MIX])[0]
        if op in ("update", "delete") and not mine:
            op = "add"
        began = time.perf_counter()
        try:
            if op == "search":
                memory.search(queries[i % len(queries)], user_id=SCOPE, limit=10, record_access=False)
            elif op == "add":
                result = memory.add([facts.fact(10_000_000 + worker * 1_000_000 + i)], user_id=SCOPE)
                mine.append(result.results[0].id)
                added += 1
            elif op == "update":
                memory.update(rng.choice(mine), f"{facts.fact(20_000_000 + worker * 1_000_000 + i)}", user_id=SCOPE)
            else:
                memory.delete(mine.pop(rng.randrange(len(mine))), user_id=SCOPE)
                deleted += 1
        except Exception as exc:  # counted and reported, never hidden: this is what the benchmark measures
            errors[f"{op}:{type(exc).__name__}"] += 1
        latencies[op].append(1000 * (time.perf_counter() - began))
    finished = time.time()
    memory.close()
    return {
        "started": started,
        "finished": finished,
        "added": added,
        "deleted": deleted,
        "errors": dict(errors),
        "latencies": latencies,
    }


def run_concurrency(processes: int, ops: int, *, prepopulate: int = 1000) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "shared.db")
        seed = _memory(path)
        for start in range(0, prepopulate, 1000):
            seed.add(facts.facts(start, min(1000, prepopulate - start)), user_id=SCOPE)
        seed.close()
        with mp.get_context("spawn").Pool(processes) as pool:
            parts = pool.map(_worker, [(path, w, ops) for w in range(processes)])
        check = _memory(path)
        live = check.stats(user_id=SCOPE).memories_by_status.get("active", 0)
        check.close()
    wall = max(p["finished"] for p in parts) - min(p["started"] for p in parts)
    errors: Counter[str] = Counter()
    by_op: dict[str, list[float]] = {name: [] for name, _ in MIX}
    for part in parts:
        errors.update(part["errors"])
        for name, samples in part["latencies"].items():
            by_op[name].extend(samples)
    expected = prepopulate + sum(p["added"] for p in parts) - sum(p["deleted"] for p in parts)
    total = processes * ops
    return {
        "processes": processes,
        "ops_per_process": ops,
        "mix": dict(MIX),
        "prepopulated": prepopulate,
        "vectors": "seeded random unit vectors (HashEmbedder), no model",
        "wall_s": round(wall, 2),
        "ops_per_s": round(total / wall, 1) if wall > 0 else None,
        "errors": sum(errors.values()),
        "errors_by_type": dict(errors),
        "live_memories": live,
        "expected_live_memories": expected,
        "lost_or_extra_writes": live - expected,
        "latency_ms": {name: {k: round(v, 2) for k, v in percentiles(s).items()} for name, s in by_op.items() if s},
    }
