"""``python -m bench {all,quality,speed,longmemeval,concurrency,write-path,graph} [--quick]``: see bench/README.md."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

from bench.datasets import load_locomo, load_longmemeval, load_madial
from bench.machine import machine_facts

QUICK = {
    "conversations": 2,
    "madial_queries": 40,
    "turns": 200,
    "facts": 1000,
    "points": [1_000, 10_000],
    "baseline_max_n": 10_000,
    "real_vectors": 10_000,
    "queries": 100,
    "processes": 2,
    "ops": 100,
}
FULL = {
    "conversations": None,
    "madial_queries": None,
    "turns": 1000,
    "facts": 4000,
    "points": [1_000, 10_000, 100_000, 1_000_000],
    "baseline_max_n": 100_000,
    "real_vectors": 100_000,
    "queries": 200,
    "processes": 4,
    "ops": 250,
}
BUDGET_S = {"memstrata": 1800.0, "chromadb": 600.0, "qdrant-local": 600.0, "mem0": 300.0}
STORES = ["memstrata", "chromadb", "qdrant-local", "mem0"]


def _quiet() -> None:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    os.environ.setdefault("MEM0_TELEMETRY", "false")
    warnings.filterwarnings("ignore")
    for name in ("chromadb", "qdrant_client", "mem0", "httpx", "bm25s"):
        logging.getLogger(name).setLevel(logging.ERROR)


def run_quality(args: argparse.Namespace, p: dict[str, Any]) -> dict[str, Any]:
    from bench.datasets import MadialSet
    from bench.embedders import CachedEmbedder
    from bench.quality import build_systems, run_locomo, run_madial

    embedder = CachedEmbedder()
    out: dict[str, Any] = {}
    wanted = args.datasets.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        if "locomo" in wanted:
            systems, out["skipped"] = build_systems(
                embedder, Path(tmp) / "locomo", with_llm=args.with_llm, reference_bm25=True
            )
            conversations = load_locomo()[: p["conversations"]]
            out["locomo"] = run_locomo(conversations, systems, max_questions=args.max_questions, progress=True)
        for language in ("zh", "en"):
            if f"madial-{language}" not in wanted:
                continue
            data = load_madial(language)
            data = MadialSet(data.language, data.memories, data.queries[: p["madial_queries"]])
            systems, out["skipped"] = build_systems(embedder, Path(tmp) / language, with_llm=args.with_llm)
            out[f"madial-{language}"] = run_madial(data, systems, progress=True)
    if "time-sensitive" in wanted:  # bench/lifecycle_bench.py: answers that changed over time
        from bench.lifecycle_bench import run_time_sensitive

        out["time-sensitive"] = run_time_sensitive(embedder)
    out["embedder"] = {"model": embedder.model_id, **embedder.stats()}
    return out


def run_speed(args: argparse.Namespace, p: dict[str, Any]) -> dict[str, Any]:
    from bench.concurrency import run_concurrency
    from bench.embedders import CachedEmbedder
    from bench.scale import ensure_fact_vectors, ensure_query_vectors, run_scale
    from bench.speed import run_throughput

    out: dict[str, Any] = {}
    if not args.skip_throughput:
        out["throughput"] = run_throughput(load_locomo(), turns=p["turns"], fact_count=p["facts"])
    points = [int(x) for x in args.points.split(",")] if args.points else p["points"]
    real = min(p["real_vectors"], max(points))
    embedder = CachedEmbedder()
    ensure_fact_vectors(real, embedder)
    query_vectors = ensure_query_vectors(p["queries"], embedder)
    out["scale"] = run_scale(
        args.stores.split(","),
        points,
        baseline_max_n=args.baseline_max_n or p["baseline_max_n"],
        real_vectors=real,
        queries=p["queries"],
        budget_s=BUDGET_S,
        model_id=embedder.model_id,
        query_vectors=query_vectors,
    )
    if not args.skip_concurrency:
        out["concurrency"] = run_concurrency(args.processes or p["processes"], args.ops or p["ops"])
    return out


def run_longmemeval(args: argparse.Namespace) -> dict[str, Any]:
    from bench.embedders import CachedEmbedder
    from bench.quality import build_systems, run_longmemeval

    embedder = CachedEmbedder()
    instances, dropped = load_longmemeval(Path(args.path))
    if args.max_questions:
        instances = instances[: args.max_questions]

    def make(workdir: Path) -> list[Any]:
        systems, _ = build_systems(
            embedder, workdir, with_llm=args.with_llm, extra_settings={"limits": {"max_text_chars": 1_000_000}}
        )
        return systems

    return run_longmemeval(instances, make, dropped=dropped)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="memstrata benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("all", "quality", "speed", "longmemeval", "concurrency", "write-path", "graph"):
        cmd = sub.add_parser(name)
        cmd.add_argument("--quick", action="store_true", help="a few minutes: subsets, scale stops at 10k")
        cmd.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
        cmd.add_argument(
            "--with-llm", action="store_true", help="also run the LLM write path (infer=True recipes, write-path suite)"
        )
        cmd.add_argument("--max-questions", type=int, default=None)
        cmd.add_argument("--datasets", default="locomo,madial-zh,madial-en,time-sensitive,graph")
        cmd.add_argument("--stores", default=",".join(STORES))
        cmd.add_argument("--points", default=None, help="comma-separated N for the scale suite")
        cmd.add_argument("--baseline-max-n", type=int, default=None)
        cmd.add_argument("--skip-throughput", action="store_true")
        cmd.add_argument("--skip-concurrency", action="store_true")
        cmd.add_argument("--processes", type=int, default=None)
        cmd.add_argument("--ops", type=int, default=None)
        if name == "longmemeval":
            cmd.add_argument("path", help="a JSON file in LongMemEval format")
    rerender = sub.add_parser("report", help="re-render Markdown and plots from a saved result JSON")
    rerender.add_argument("json", type=Path)
    worker = sub.add_parser("scale-worker", help=argparse.SUPPRESS)
    worker.add_argument("spec", type=Path)
    args = parser.parse_args(argv)
    _quiet()

    if args.command == "scale-worker":
        from bench.scale import run_worker

        run_worker(json.loads(args.spec.read_text()))
        return 0

    from bench import report

    if args.command == "report":
        for path in report.rerender(args.json):
            print(path)
        return 0
    p = dict(QUICK if args.quick else FULL)
    result: dict[str, Any] = {"machine": machine_facts(), "quick": args.quick, "parameters": p}
    began = time.perf_counter()
    if args.command in ("all", "quality"):
        result["quality"] = run_quality(args, p)
    if args.command in ("all", "speed"):
        result["speed"] = run_speed(args, p)
    if args.command == "longmemeval":
        result["quality"] = {"longmemeval": run_longmemeval(args)}
    if args.command == "write-path" or (args.command == "all" and args.with_llm):
        from bench.write_path import run_write_path

        result.setdefault("speed", {})["write_path"] = run_write_path(args.quick)
    if args.command == "graph" or (args.command == "all" and "graph" in args.datasets):
        from bench.graph_bench import run_graph

        result.setdefault("quality", {})["graph"] = run_graph(args.quick, with_llm=args.with_llm)
    if args.command == "concurrency":
        from bench.concurrency import run_concurrency

        result["speed"] = {"concurrency": run_concurrency(args.processes or p["processes"], args.ops or p["ops"])}
    result["wall_s"] = round(time.perf_counter() - began, 1)
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    suite = args.command + ("-quick" if args.quick else "")
    for path in report.write(result, suite, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
