"""Search latency at 10k memories, this read path against another source tree, on the same data.

``PYTHONPATH=src python -m bench.ranking_speed`` (and again with ``PYTHONPATH=<other tree>/src``)
uses only the public API, as bench/scale.py's memstrata store does: 10,000 synthetic facts
(bench/facts.py) with their USE vectors (cached under bench/.cache), one scope, 200 queries with
precomputed vectors (query embedding not timed), ``search(limit=10, record_access=False)``, after the
in-memory keyword copy of the store is built (where the tree's defaults give the store one).
It reports p50/p95/p99 in ms for the default search and for ``threshold=0`` (every candidate
processed, the most work the cutoff can save). Results are appended to
``bench/results/<date>-ranking-speed.json``. bench/scale.py runs its workers against the installed
memstrata, so it cannot time a worktree's sources; this can.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

import memstrata
from bench import facts
from bench.embedders import CachedEmbedder, PresetEmbedder, fact_index_texts
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.storage.sqlite.store import SQLiteStore

RESULTS = Path(__file__).resolve().parent / "results"


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = np.asarray(samples)
    return {f"p{q}": round(float(np.percentile(ordered, q)), 2) for q in (50, 95, 99)}


def run(n: int, queries: int, label: str) -> dict[str, Any]:
    embedder = CachedEmbedder()
    texts, asked = facts.facts(0, n), facts.queries(queries)
    vectors, query_vectors = embedder.embed_batch(texts), embedder.embed_batch(asked)
    preset = PresetEmbedder(embedder.model_id)
    preset.keep(dict(zip(asked, query_vectors, strict=True)))
    out: dict[str, Any] = {"label": label, "memstrata": str(Path(memstrata.__file__).parent), "n": n}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "speed.db"
        memory = Memory(SQLiteStore(path), preset, settings=load_settings({"store": {"path": str(path)}}))
        preset.provide(fact_index_texts(texts), vectors)
        memory.add(texts, user_id="bench")
        # Steady state, as a server reaches it: the in-memory keyword copy built (a process's first keyword
        # searches are left to FTS5, and the build would land in the timed searches' tail).
        getattr(memory.store, "wait_for_keyword_index", lambda: True)()
        for name, extra in (("default", {}), ("threshold=0", {"threshold": 0.0})):
            memory.search(asked[0], user_id="bench", record_access=False, **extra)  # warm the index
            samples, returned = [], 0
            for text in asked:
                began = time.perf_counter()
                returned += len(memory.search(text, user_id="bench", limit=10, record_access=False, **extra))
                samples.append(1000 * (time.perf_counter() - began))
            out[name] = {**_percentiles(samples), "mean_hits": round(returned / len(asked), 2)}
        memory.close()
    out["mean_ms"] = round(statistics.mean(samples), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ranking_speed", description=__doc__)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--label", default="this tree")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.n, args.queries, args.label)
    path = args.out / f"{date.today().isoformat()}-ranking-speed.json"
    previous = json.loads(path.read_text()) if path.exists() else []
    path.write_text(json.dumps([*previous, result], indent=1), encoding="utf-8")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
