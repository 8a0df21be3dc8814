"""Where the SQLite backend's in-memory keyword copy starts to pay: search latency with the copy against FTS5 alone
on the same file, at several store sizes, with what the copy costs to build and to keep.

``python -m bench.keyword_copy [--sizes 1000,3000,10000]``: for each size, bench/facts.py's synthetic facts with
their USE vectors (cached under bench/.cache) in one SQLite file, opened twice: once answering keywords from the
copy from the first search (``keyword_cache_min_rows=0``), once from FTS5 alone. The two are searched in turns,
``--rounds`` times over 200 queries (precomputed vectors, query embedding not timed), through the public
``Memory.search(limit=10, record_access=False)``. Reported: p50/p95 per side (the median over rounds), the share of
queries whose ten hits differ (the copy must rank as FTS5 does: 0), the copy's first build (ms) and the
memory it holds (tracemalloc), and the slowest of a new process's searches 2 to 60 with the default settings
(the copy's first build happens among them: inline, or in a thread beside them; the first search reads the vectors
in, whatever the keywords do).
Writes ``bench/results/<date>-keyword-copy-threshold.{json,md}``; store.keyword_cache_min_rows's default and
storage/sqlite/keywords.py's FTS_ANSWERS_FIRST come from it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from bench import facts
from bench.embedders import CachedEmbedder, PresetEmbedder, fact_index_texts
from bench.machine import machine_facts, machine_line
from bench.report import RESULTS_DIR, write_json_and_markdown
from bench.tables import markdown_table
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.storage.sqlite.store import SQLiteStore

SIDES = {"copy": 0, "fts5": 10**9}  # keyword_cache_min_rows of each side
FIRST_SEARCHES = 60  # a new process's first searches with the default settings, the copy's first build among them


def _copy_mib(path: Path, embedder: PresetEmbedder) -> float:
    """What one more copy of the file's keywords holds, as Python and numpy allocate it (tracemalloc)."""
    memory = _open(path, embedder, SIDES["copy"])
    tracemalloc.start()
    memory.store.wait_for_keyword_index()  # type: ignore[attr-defined]
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    memory.close()
    return held / 2**20


def _open(path: Path, embedder: PresetEmbedder, min_rows: int) -> Memory:
    store = SQLiteStore(path, keyword_cache_min_rows=min_rows)
    return Memory(store, embedder, settings=load_settings({"store": {"path": str(path)}}))


def _timed(memory: Memory, queries: list[str]) -> tuple[list[float], list[list[str]]]:
    samples, lists = [], []
    for text in queries:
        began = time.perf_counter()
        hits = memory.search(text, user_id="bench", limit=10, record_access=False)
        samples.append(1000 * (time.perf_counter() - began))
        lists.append([hit.memory.id for hit in hits])
    return samples, lists


def _first_searches(path: Path, embedder: PresetEmbedder, queries: list[str]) -> list[float]:
    """A new process's first searches on the store with the default settings: FTS5 answers the first keyword
    searches, then the copy is built (inline or in a thread, storage/sqlite/keywords.py) and answers."""
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))
    _timed(memory, queries[:1])  # a process's first search reads the vectors in, whatever the keywords do
    samples, _ = _timed(memory, queries[1:])
    memory.close()
    return samples


def one_size(n: int, queries: int, rounds: int, embedder: CachedEmbedder) -> dict[str, Any]:
    texts, asked = facts.facts(0, n), facts.queries(queries)
    preset = PresetEmbedder(embedder.model_id)
    preset.keep(dict(zip(asked, embedder.embed_batch(asked), strict=True)))
    preset.provide(fact_index_texts(texts), embedder.embed_batch(texts))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "copy.db"
        writer = _open(path, preset, SIDES["fts5"])
        writer.add(texts, user_id="bench")
        writer.close()
        sides = {name: _open(path, preset, min_rows) for name, min_rows in SIDES.items()}
        began = time.perf_counter()
        sides["copy"].store.wait_for_keyword_index()  # type: ignore[attr-defined]
        build_ms, copy_mib = 1000 * (time.perf_counter() - began), _copy_mib(path, preset)
        for memory in sides.values():
            memory.search(asked[0], user_id="bench", record_access=False)  # warm the vectors and the caches
        p50: dict[str, list[float]] = {name: [] for name in sides}
        p95: dict[str, list[float]] = {name: [] for name in sides}
        lists: dict[str, list[list[str]]] = {}
        for _ in range(rounds):
            for name, memory in sides.items():
                samples, lists[name] = _timed(memory, asked)
                p50[name].append(float(np.percentile(samples, 50)))
                p95[name].append(float(np.percentile(samples, 95)))
        for memory in sides.values():
            memory.close()
        first = _first_searches(path, preset, asked[:FIRST_SEARCHES])
    differ = sum(a != b for a, b in zip(lists["copy"], lists["fts5"], strict=True)) / len(asked)
    row: dict[str, Any] = {"n": n, "build_ms": round(build_ms, 1), "copy_mib": round(copy_mib, 1)}
    for name in sides:
        row[f"{name}_p50"] = round(statistics.median(p50[name]), 2)
        row[f"{name}_p95"] = round(statistics.median(p95[name]), 2)
    row["p50_saved_ms"] = round(row["fts5_p50"] - row["copy_p50"], 2)
    row["differing_lists"] = round(differ, 3)
    row["first_searches_max_ms"] = round(max(first), 1)
    row["first_searches_p50_ms"] = round(float(np.percentile(first, 50)), 2)
    return row


def markdown(result: dict[str, Any]) -> str:
    header = ["memories", "copy p50 ms", "FTS5 p50 ms", "copy p95 ms", "FTS5 p95 ms", "p50 saved ms",
              "lists differing", "first build ms", "copy MiB", "new process: slowest of searches 2-60 ms"]  # fmt: skip
    rows = [[r["n"], r["copy_p50"], r["fts5_p50"], r["copy_p95"], r["fts5_p95"], r["p50_saved_ms"],
             r["differing_lists"], r["build_ms"], r["copy_mib"], r["first_searches_max_ms"]]
            for r in result["sizes"]]  # fmt: skip
    return "\n\n".join([
        "## The in-memory keyword copy against FTS5 alone, by store size",
        f"Machine: {machine_line(result['machine'])}. {result['queries']} queries, {result['rounds']} rounds in "
        "turns (medians over rounds); `Memory.search(limit=10)`, query vectors precomputed.",
        markdown_table(header, rows),
        "Command: `python -m bench.keyword_copy`",
    ]) + "\n"  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.keyword_copy", description=__doc__)
    parser.add_argument("--sizes", default="1000,3000,10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    embedder = CachedEmbedder()
    result: dict[str, Any] = {"machine": machine_facts(), "queries": args.queries, "rounds": args.rounds}
    sizes = [int(size) for size in args.sizes.split(",")]
    result["sizes"] = [one_size(n, args.queries, args.rounds, embedder) for n in tqdm(sizes, desc="store sizes")]
    write_json_and_markdown(result, markdown(result), args.out, "keyword-copy-threshold")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
