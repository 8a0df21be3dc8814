"""What keeping recent query vectors saves: ``context()`` and search latency with ``embedder.query_cache`` on and off.

``python -m bench.query_vectors [--n 2000] [--tasks 40] [--queries 200] [--rounds 3]``

One scope of ``--n`` synthetic facts (bench/facts.py; their USE vectors from bench/.cache), searched with the real
bundled model embedding every query, as a user's search is. The two settings run on the same store, interleaved
round by round (off, on, off, on, ...), each in a fresh ``Memory``, so both meet the same machine load:

- **agent turns**: ``context(task, budget_tokens=600)`` for ``--tasks`` different tasks, each asked once, as an
  agent asks at each turn; what repeats is what ``context()`` itself asks every time (its standing questions);
- **search, new queries**: ``--queries`` different queries, each once (nothing to reuse: the cost of the table);
- **search, asked again**: the same queries a second time.

Writes ``bench/results/<date>-query-vectors.{json,md}``: median and p95 ms per workload and setting, and the
ratio of medians (on / off).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np
from tqdm import tqdm

from bench import facts
from bench.embedders import CachedEmbedder, PresetEmbedder, fact_index_texts
from bench.machine import machine_facts, machine_line
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.protocol import Vectors
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore

RESULTS = Path(__file__).resolve().parent / "results"
SETTINGS = {"off": 0, "on": 2048}  # embedder.query_cache


class StoredThenModel:
    """The stored facts' vectors as given (their embedding is not what is measured); every other text, a query,
    embedded by the real model."""

    def __init__(self, stored: PresetEmbedder, model: UniversalSentenceEncoder) -> None:
        self.stored, self.model = stored, model
        self.model_id, self.dims = model.model_id, model.dims

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        try:
            return self.stored.embed_batch(texts)
        except KeyError:
            return self.model.embed_batch(texts)


def _timed(calls: Sequence[Callable[[], object]]) -> list[float]:
    samples = []
    for call in calls:
        began = perf_counter()
        call()
        samples.append(1000 * (perf_counter() - began))
    return samples


def _workloads(memory: Memory, tasks: list[str], queries: list[str]) -> dict[str, list[float]]:
    def context(task: str) -> Callable[[], object]:
        return lambda: memory.context(task, user_id="bench", budget_tokens=600)

    def search(text: str) -> Callable[[], object]:
        return lambda: memory.search(text, user_id="bench", limit=10, record_access=False)

    return {
        "agent turns: context()": _timed([context(task) for task in tasks]),
        "search, new queries": _timed([search(text) for text in queries]),
        "search, asked again": _timed([search(text) for text in queries]),
    }


def run(n: int, tasks: int, queries: int, rounds: int) -> dict[str, Any]:
    cached = CachedEmbedder()
    texts = facts.facts(0, n)
    stored = PresetEmbedder(cached.model_id)
    stored.keep(dict(zip(fact_index_texts(texts), cached.embed_batch(texts), strict=True)))
    model = UniversalSentenceEncoder(threads=1)
    model.load()
    embedder = StoredThenModel(stored, model)
    asked = list(dict.fromkeys(facts.queries(4 * (tasks + queries), seed=11)))  # each text once
    if len(asked) < tasks + queries:
        raise SystemExit(f"bench/facts.py gives {len(asked)} different queries; ask for fewer")
    task_texts, query_texts = asked[:tasks], asked[tasks : tasks + queries]
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in SETTINGS}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queries.db"

        def open_memory(cache: int) -> Memory:
            settings = load_settings({"store": {"path": str(path)}, "embedder": {"query_cache": cache}})
            return Memory(SQLiteStore(path), embedder, settings=settings)

        with open_memory(0) as memory:
            memory.add(texts, user_id="bench")
            memory.search("warm up", user_id="bench", record_access=False)
        for _ in tqdm(range(rounds), desc="rounds (off, on)"):
            for name, cache in SETTINGS.items():
                with open_memory(cache) as memory:
                    memory.search("warm up", user_id="bench", record_access=False)
                    for workload, times in _workloads(memory, task_texts, query_texts).items():
                        samples[name].setdefault(workload, []).extend(times)
    table = {}
    for workload in samples["off"]:
        row = {name: _summary(samples[name][workload]) for name in SETTINGS}
        row["ratio_of_medians"] = round(row["on"]["p50"] / row["off"]["p50"], 3)
        table[workload] = row
    return {
        "n": n,
        "tasks": tasks,
        "queries": queries,
        "rounds": rounds,
        "machine": machine_line(machine_facts()),
        "results": table,
    }


def _summary(samples: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(samples), 2), "p95": round(float(np.percentile(samples, 95)), 2),
            "calls": len(samples)}  # fmt: skip


def write_report(result: dict[str, Any], stem: Path) -> None:
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    lines = [
        "# Recent query vectors: `embedder.query_cache` off (0) and on (2048)",
        "",
        f"{result['machine']}. One scope of {result['n']:,} facts; queries embedded by the bundled model; "
        f"{result['rounds']} rounds, off and on interleaved; load {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| workload | calls per setting | off p50 / p95 ms | on p50 / p95 ms | on / off (medians) |",
        "|---|---:|---:|---:|---:|",
    ]
    for workload, row in result["results"].items():
        off, on = row["off"], row["on"]
        lines.append(f"| {workload} | {off['calls']} | {off['p50']} / {off['p95']} | {on['p50']} / {on['p95']} | "
                     f"{row['ratio_of_medians']} |")  # fmt: skip
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.query_vectors", description=__doc__)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--suffix", default="")
    args = parser.parse_args(argv)
    result = run(args.n, args.tasks, args.queries, args.rounds)
    stem = args.out / f"{date.today().isoformat()}-query-vectors{args.suffix}"
    write_report(result, stem)
    print(stem.with_suffix(".md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
