"""A new process on a store that bench/scale.py built: what a restarted service pays and holds.

Run by the scale worker after each point (``python -m bench.scale_fresh SPEC``): open the store, time the first
search (persisted vector index loaded, keyword copy still building, so FTS5 answers), wait for both indexes, time
the searches, and report the process's RSS and peak RSS. Unlike the worker's own numbers, this RSS holds nothing
left over from inserting the rows.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench import facts
from bench.baselines.stores import MemstrataStore
from bench.metrics import percentiles
from bench.scale import proc_status_mb


def _memory_mb() -> dict[str, float]:
    """RSS, its anonymous part (the process's own memory) and its file-backed part (pages of the memory-mapped
    index files: clean, shared with the page cache, dropped by the kernel under pressure), and peak RSS, in MB."""
    names = {"rss_mb": "VmRSS", "rss_anon_mb": "RssAnon", "rss_file_mb": "RssFile", "peak_rss_mb": "VmHWM"}
    found = proc_status_mb(*names.values())
    return {key: found[name] for key, name in names.items()}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    queries = facts.queries(spec["queries"])
    vectors = np.load(spec["query_vectors"])[: len(queries)]
    began = time.perf_counter()
    store = MemstrataStore(Path(spec["workdir"]), spec["model_id"], keyword_cache=spec["keyword_cache"])
    store.prepare_queries(queries, vectors)
    store.search(queries[0], vectors[0], 10)
    first_ms = 1000 * (time.perf_counter() - began)
    began = time.perf_counter()
    store.ready()
    ready_s = time.perf_counter() - began
    samples = []
    for text, vector in zip(queries, vectors, strict=True):
        began = time.perf_counter()
        store.search(text, vector, 10)
        samples.append(1000 * (time.perf_counter() - began))
    memory = _memory_mb()
    store.close()
    return {
        "open_first_search_ms": round(first_ms, 1),  # after imports: the store, its indexes, one search
        "indexes_ready_s": round(ready_s, 1),
        "search": {k: round(v, 3) for k, v in percentiles(samples).items()},
        **memory,
    }


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(Path(sys.argv[1]).read_text()))))
