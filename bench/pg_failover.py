"""A read replica that goes down and comes back while searches keep arriving.

``python -m bench.pg_failover [--phase-s 10]``

A real primary and hot standby (``bench/pg_standby.py``), ``memstrata serve`` with ``store.read_url`` on the
standby, and one client searching without pause. The standby is stopped after one phase, started again after the
next, and the client goes on for two more phases: the first while searches still skip the standby (30 s after it
failed, ``storage/postgres/replica.py``), the last once they may use it again. Per phase: searches, wrong or failed
answers, latency, and the CPU time each server used (the standby's shows when it is searched again).
Writes JSON and a Markdown table to bench/results/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

from bench.machine import machine_facts, machine_line
from bench.metrics import percentiles
from bench.pg_standby import PrimaryWithStandby
from bench.report import write_json_and_markdown
from bench.service_load import make_key, start_server
from memstrata.storage.postgres.replica import RETRY_AFTER_S
from memstrata.storage.postgres.store import PostgresStore

RESULTS = Path(__file__).parent / "results"
FACTS = ["我周末喜欢打羽毛球", "I live in Berlin", "I'm allergic to peanuts", "我的猫叫团子"]
QUESTION, ANSWER = "Where do I live?", "I live in Berlin"


def searching(client: httpx.Client, until: float, samples: list[tuple[float, float, bool]]) -> None:
    while time.monotonic() < until:
        began = time.perf_counter()
        try:
            response = client.post("/v1/memories/search", json={"user_id": "u", "query": QUESTION})
            found = response.json() if response.status_code == 200 else {}
            hits = found.get("results", []) if isinstance(found, dict) else found
            right = bool(hits) and (hits[0].get("memory") or hits[0]).get("text") == ANSWER
        except (httpx.HTTPError, ValueError):
            right = False
        samples.append((time.monotonic(), (time.perf_counter() - began) * 1000, right))


def _used(before: float, after: float) -> float:
    """CPU seconds a server used between two readings; a server restarted in between counts from its start."""
    return after - before if after >= before else after


def _row(name: str, from_s: float, mine: list[tuple[float, bool]], cpu: dict[str, float], ended: dict[str, float]
         ) -> dict[str, Any]:  # fmt: skip
    latencies = [ms for ms, _ in mine]
    return {
        "phase": name,
        "from_s": round(from_s, 1),
        "searches": len(mine),
        "wrong_or_failed": sum(not right for _, right in mine),
        "latency_ms": {**percentiles(latencies), "max_ms": max(latencies, default=0.0)},
        "cpu_s": {server: round(_used(cpu[server], ended[server]), 2) for server in ("primary", "standby")},
    }


def run(phase_s: float) -> dict[str, Any]:
    skipped = max(phase_s, RETRY_AFTER_S - phase_s + 2)  # until the standby may be searched again, and a little more
    phases = [("standby up", phase_s), ("standby down", phase_s), ("standby back, still skipped", skipped),
              ("standby used again", phase_s)]  # fmt: skip
    cluster = PrimaryWithStandby()
    try:
        with cluster.admin() as conn:
            conn.execute("CREATE DATABASE failover")
        PostgresStore(cluster.primary_url("failover")).close()
        cluster.start_standby()
        with tempfile.TemporaryDirectory(prefix="memstrata-failover-") as tmp:
            token = make_key(Path(tmp))
            setting = f"store.read_url={cluster.standby_url('failover')}"
            server, url = start_server(Path(tmp), 1, cluster.primary_url("failover"), [setting])
            try:
                client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
                client.post("/v1/memories", json={"user_id": "u", "text": FACTS}).raise_for_status()
                cluster.wait_for_replay()
                samples: list[tuple[float, float, bool]] = []
                began = time.monotonic()
                worker = threading.Thread(target=searching, args=(client, began + sum(s for _, s in phases), samples))
                worker.start()
                rows, start = [], began
                for number, (name, seconds) in enumerate(tqdm(phases, desc="phases", unit="phase")):
                    cpu = cluster.cpu_seconds()
                    if number == 1:
                        cluster.stop_standby()
                    if number == 2:
                        cluster.start_standby()
                    time.sleep(max(0.0, start + seconds - time.monotonic()))
                    ended = cluster.cpu_seconds()
                    mine = [(ms, right) for at, ms, right in samples if start <= at < start + seconds]
                    rows.append(_row(name, start - began, mine, cpu, ended))
                    start += seconds
                worker.join()
            finally:
                server.terminate()
                server.wait(timeout=30)
    finally:
        cluster.close()
    return {"phases": rows}


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Read replica failover: the standby stopped and started under a steady search load",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f'Command: `{result["command"]}`. One client searches without pause ("{QUESTION}" of 4 memories); a search '
        f'counts as right when its first hit is "{ANSWER}". Searches skip a failed standby for {RETRY_AFTER_S:.0f} s.',
        "",
        "| phase | from s | searches | wrong or failed | p50 ms | p99 ms | max ms | primary CPU s | standby CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["phases"]:
        latency = row["latency_ms"]
        lines.append(
            f"| {row['phase']} | {row['from_s']} | {row['searches']} | {row['wrong_or_failed']} | "
            f"{latency['p50_ms']:.1f} | {latency['p99_ms']:.1f} | {latency['max_ms']:.0f} | "
            f"{row['cpu_s']['primary']:.2f} | {row['cpu_s']['standby']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--phase-s", type=float, default=10.0, help="seconds of each phase")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = {"command": "python -m bench.pg_failover " + " ".join(argv if argv is not None else sys.argv[1:]),
              "machine": machine_facts(), **run(args.phase_s)}  # fmt: skip
    write_json_and_markdown(result, markdown(result), args.out, "pg-replica-failover")
    return 0 if all(row["wrong_or_failed"] == 0 for row in result["phases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
