"""Searches on a PostgreSQL primary alone vs with a hot standby as ``store.read_url``, side by side in one run.

``python -m bench.pg_replica [--clients 50] [--requests 100] [--workers 2] [--rounds 2]``

A real primary and a real hot standby streaming from it (``bench/pg_standby.py``) run on this machine. Each run
starts ``memstrata serve`` on a fresh database of the primary, seeds every client's facts (not measured), then
times the clients' searches (``bench/service_load.py``) and the CPU time each PostgreSQL server used meanwhile.
Runs alternate between the two set-ups. All of it shares one machine's cores, so throughput here cannot grow with
the replica; what the table shows is how much of the database's search work leaves the primary, what the route
costs in latency, and that the answers come back without errors.
Writes JSON and a Markdown table to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.machine import machine_facts, machine_line
from bench.pg_standby import PrimaryWithStandby
from bench.report import write_json_and_markdown
from bench.service_load import make_key, run_load, start_server
from memstrata.storage.postgres.store import PostgresStore

RESULTS = Path(__file__).parent / "results"
SETUPS = ("primary only", "with read replica")


def one_run(cluster: PrimaryWithStandby, database: str, setup: str, args: argparse.Namespace) -> dict[str, Any]:
    with cluster.admin() as conn:
        conn.execute(f"CREATE DATABASE {database}")
    PostgresStore(cluster.primary_url(database)).close()  # migrated, with its store id
    cluster.wait_for_replay()
    settings = [f"store.read_url={cluster.standby_url(database)}"] if setup != SETUPS[0] else []
    load = argparse.Namespace(clients=args.clients, requests=args.requests, add_ratio=0.0, query_pool=0,
                              seed_facts=args.seed_facts, time_limit=args.time_limit, setting=settings,
                              workers=args.workers)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="memstrata-replica-") as tmp:
        token = make_key(Path(tmp))
        server, url = start_server(Path(tmp), 1, cluster.primary_url(database), settings, args.workers)
        began: dict[str, float] = {}

        def seeded() -> None:
            cluster.wait_for_replay()  # the seeds are on the standby too, so both set-ups search the same rows
            began.update(cluster.cpu_seconds())

        try:
            result = asyncio.run(run_load([url], token, load, seeded))
        finally:
            server.terminate()
            server.wait(timeout=30)
    ended = cluster.cpu_seconds()
    searches = result["latency_ms"]["search"]["requests"] if "search" in result["latency_ms"] else 0
    used = {name: ended[name] - began[name] for name in ended}
    return {
        "setup": setup,
        "database": database,
        "searches": searches,
        "errors": result["errors"],
        "error_examples": result["error_examples"],
        "searches_per_s": result["search_rps"],
        "latency_ms": result["latency_ms"].get("search", {}),
        "cpu_s": {name: round(value, 2) for name, value in used.items()},
        "primary_cpu_ms_per_search": round(1000 * used["primary"] / searches, 3) if searches else None,
        "standby_cpu_ms_per_search": round(1000 * used["standby"] / searches, 3) if searches else None,
    }


def summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for setup in SETUPS:
        mine = [run for run in runs if run["setup"] == setup]
        rows.append({
            "setup": setup,
            "runs": len(mine),
            "errors": sum(run["errors"] for run in mine),
            "searches_per_s": statistics.median(run["searches_per_s"] for run in mine),
            "p50_ms": statistics.median(run["latency_ms"]["p50_ms"] for run in mine),
            "p95_ms": statistics.median(run["latency_ms"]["p95_ms"] for run in mine),
            "primary_cpu_ms_per_search": statistics.median(run["primary_cpu_ms_per_search"] for run in mine),
            "standby_cpu_ms_per_search": statistics.median(run["standby_cpu_ms_per_search"] for run in mine),
        })  # fmt: skip
    return rows


def markdown(result: dict[str, Any]) -> str:
    cfg = result["config"]
    lines = [
        f"# Read replica: {cfg['clients']} clients × {cfg['requests']} searches, {cfg['workers']} worker processes",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f"Command: `{result['command']}`. Medians of {cfg['rounds']} runs per set-up, alternating; primary, "
        "standby, server and load generator share the machine's cores, so searches/s cannot grow here: the "
        "CPU columns show where the database work ran.",
        "",
        "| set-up | runs | errors | searches/s | p50 ms | p95 ms | primary CPU ms / search | standby CPU ms / search |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["summary"]:
        lines.append(
            f"| {row['setup']} | {row['runs']} | {row['errors']} | {row['searches_per_s']:.1f} | {row['p50_ms']:.1f} "
            f"| {row['p95_ms']:.1f} | {row['primary_cpu_ms_per_search']:.2f} | {row['standby_cpu_ms_per_search']:.2f} |"
        )
    lines += ["", "| run | set-up | searches/s | p50 ms | p95 ms | primary CPU s | standby CPU s |",
              "|---:|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for number, run in enumerate(result["runs"], start=1):
        latency = run["latency_ms"]
        lines.append(
            f"| {number} | {run['setup']} | {run['searches_per_s']:.1f} | {latency['p50_ms']:.1f} | "
            f"{latency['p95_ms']:.1f} | {run['cpu_s']['primary']:.2f} | {run['cpu_s']['standby']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=100, help="searches per client")
    parser.add_argument("--seed-facts", type=int, default=20, help="facts stored per client before measuring")
    parser.add_argument("--workers", type=int, default=2, help="memstrata serve --workers")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each set-up")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    machine = machine_facts()
    cluster = PrimaryWithStandby()
    runs = []
    try:
        cluster.start_standby()
        plan = [setup for _ in range(args.rounds) for setup in SETUPS]
        for number, setup in enumerate(tqdm(plan, desc="runs", unit="run")):
            runs.append(one_run(cluster, f"bench_{number}", setup, args))
            time.sleep(2)  # let the last run's connections close before the next one starts
    finally:
        cluster.close()
    result = {
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "command": "python -m bench.pg_replica " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine,
        "runs": runs,
        "summary": summary(runs),
    }
    write_json_and_markdown(result, markdown(result), args.out, "pg-read-replica")
    return 0 if all(run["errors"] == 0 for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
