"""Import into one growing scope: seconds per batch of ``Memory.add`` as the scope fills.

A scope's size must not slow each added text: ``add()`` asks, per text, whether the scope already holds it (an
index lookup). When SQLite planned that lookup on the scope index instead, each batch of 10,000 scanned the whole
scope once per text and the import slowed quadratically. Each batch here should take about as long as the first.

The texts and vectors are bench/scale.py's (generated facts, cached USE vectors, ``Memory.add`` through the bench's
memstrata store), so a run takes seconds per batch and needs no embedding. To compare two versions, run this file
from each tree (``PYTHONPATH=<tree>:<tree>/src``); the result names the commit it measured.

    python -m bench.import_growth [--batches 5] [--batch 10000] [--suffix NAME]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import facts
from bench.embedders import CachedEmbedder
from bench.machine import machine_facts, machine_line
from bench.scale import CACHE_DIR, FACT_VECTORS, ensure_fact_vectors, fact_vectors, make_store

RESULTS = Path(__file__).resolve().parent / "results"


def run(batches: int, batch: int, real_vectors: int) -> dict[str, Any]:
    embedder = CachedEmbedder()
    real = ensure_fact_vectors(min(real_vectors, batches * batch), embedder)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=CACHE_DIR))
    rows: list[dict[str, Any]] = []
    try:
        store = make_store("memstrata", work, embedder.model_id)
        done = 0
        for _ in tqdm(range(batches), desc="import batches"):
            texts, vectors = facts.facts(done, batch), fact_vectors(done, batch, real, FACT_VECTORS)
            began = time.perf_counter()
            store.insert(done, texts, vectors)
            seconds = time.perf_counter() - began
            done += batch
            rows.append({"rows_before": done - batch, "rows_after": done, "seconds": round(seconds, 2),
                         "rows_per_s": round(batch / seconds, 1)})  # fmt: skip
        store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = sum(row["seconds"] for row in rows)
    return {"machine": machine_facts(), "batch": batch, "batches": rows, "total_s": round(total, 1),
            "rows_per_s": round(batches * batch / total, 1), "last_over_first": round(rows[-1]["seconds"] /
            rows[0]["seconds"], 2)}  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    lines = ["## Import into one growing scope", "", f"Machine: {machine_line(result['machine'])}.", "",
             f"`Memory.add` of {result['batch']:,} generated facts per batch into one scope (bench/import_growth.py).",
             "", "| scope before | scope after | seconds | rows/s |", "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {r['rows_before']:,} | {r['rows_after']:,} | {r['seconds']} | {r['rows_per_s']:,} |"
              for r in result["batches"]]  # fmt: skip
    lines += ["", f"Total {result['total_s']} s, {result['rows_per_s']:,} rows/s; last batch / first batch "
              f"{result['last_over_first']}."]  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.import_growth", description=__doc__)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--real-vectors", type=int, default=20_000, help="USE vectors for the first N facts")
    parser.add_argument("--suffix", default="", help="added to the result file names")
    args = parser.parse_args(argv)
    result = run(args.batches, args.batch, args.real_vectors)
    stem = RESULTS / f"{result['machine']['when_utc'][:10]}-import-growth{args.suffix}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(stem.with_suffix(".md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
