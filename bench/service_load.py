"""Load on the memory service: N concurrent clients × M requests (mixed add / search) over loopback HTTP.

``python -m bench.service_load [--clients 50] [--requests 200] [--add-ratio 0.3] [--time-limit 600]``

The server is the real thing, started as its own process (``memstrata serve``) on a fresh SQLite
store with the bundled embedder and an API key, so the load generator does not share its GIL. Each
client is one user: it first stores ``--seed-facts`` facts in one request (not measured), then sends
its requests one after another (adds of one fact, searches with limit 10). The server runs with one
OpenBLAS thread (``--blas-threads``), as ``make run`` starts it: with the default (a thread per core)
every request thread's tiny matrix products fight over the cores and tail latency grows tenfold. The run stops at
``--time-limit`` seconds whatever is left. Writes JSON and a Markdown table to bench/results/.
On a 2-core machine the generator and the server share the cores: the numbers are a floor.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from bench import facts
from bench.machine import machine_facts, machine_line
from bench.metrics import percentiles
from bench.report import write_json_and_markdown
from memstrata.api.keys import KeyStore

RESULTS = Path(__file__).parent / "results"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_key(directory: Path) -> str:
    keys = KeyStore(directory / "keys.db")  # the default place: beside a SQLite store; passed with --keys otherwise
    token = keys.create("bench", name="service-load")[1]
    keys.close()
    return token


def start_server(
    directory: Path, blas_threads: int, db: str | None = None, settings: Sequence[str] = (), workers: int = 1
) -> tuple[subprocess.Popen[bytes], str]:
    """A `memstrata serve --workers N` command on ``db`` (default: a fresh SQLite store in ``directory``); it and
    its URL. ``settings``: ``section.name=value`` items, given to the server as MEMSTRATA_ environment variables."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env["MEMSTRATA_LLM__PROVIDER"] = "rules"  # adds here are infer=False; no model should load for them
    for item in settings:
        name, _, value = item.partition("=")
        env["MEMSTRATA_" + name.replace(".", "__").upper()] = value
    if blas_threads:  # as `make run` does: one BLAS thread per request thread, no oversubscription
        env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    store = db or str(directory / "memstrata.db")
    command = [sys.executable, "-m", "memstrata", "--db", store, "serve", "--port", str(port), "--keys"]
    if workers > 1:  # only then: an older memstrata (a baseline run) has no --workers
        command[-1:-1] = ["--workers", str(workers)]
    server = subprocess.Popen(
        [*command, str(directory / "keys.db")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"memstrata serve exited with {server.returncode}")
        try:
            if httpx.get(f"{url}/ready", timeout=2).status_code == 200:
                return server, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.kill()
    raise RuntimeError("memstrata serve did not become ready in 120 s")


async def seed(http: aiohttp.ClientSession, number: int, args: argparse.Namespace) -> None:
    first = 10_000_000 + number * args.seed_facts
    body = {"user_id": f"user{number}", "text": facts.facts(first, args.seed_facts)}
    for _ in range(30):  # 50 clients seeding at once meet the overload guard: wait as its Retry-After says
        async with http.post("/v1/memories", json=body) as response:
            await response.read()
            if response.status != 503:
                response.raise_for_status()
                return
            retry_after = float(response.headers.get("Retry-After", "1"))
        await asyncio.sleep(retry_after)
    raise RuntimeError(f"client {number} could not store its facts: 30 answers of 503")


async def client(
    http: aiohttp.ClientSession, number: int, args: argparse.Namespace, deadline: float, samples: list[dict[str, Any]]
) -> None:
    rng = random.Random(number)
    user = f"user{number}"
    seed_start = number * args.requests
    # Each search a question its client has not asked yet (--query-pool 0), or the client's first N in turn:
    # repeats within a scope reuse their vectors (embedder.query_cache), so they measure a different path.
    pool = args.query_pool or args.requests
    questions = list(dict.fromkeys(facts.queries(4 * pool, seed=number)))[:pool]
    for i in range(args.requests):
        if time.monotonic() >= deadline:
            return
        op = "add" if rng.random() < args.add_ratio else "search"
        if op == "add":
            body: dict[str, Any] = {"user_id": user, "text": facts.fact(20_000_000 + seed_start + i)}
            path = "/v1/memories"
        else:
            body = {"user_id": user, "query": questions[i % len(questions)], "limit": 10}
            path = "/v1/memories/search"
        began = time.perf_counter()
        try:
            async with http.post(path, json=body) as response:
                text = await response.text()
                status, error = response.status, None if response.status < 400 else text[:200]
        except (aiohttp.ClientError, TimeoutError) as exc:
            status, error = 0, f"{type(exc).__name__}: {exc}"
        samples.append({"op": op, "ms": (time.perf_counter() - began) * 1000, "status": status, "error": error})


async def run_load(
    urls: list[str], token: str, args: argparse.Namespace, seeded: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Client ``n`` talks to server ``n % len(urls)`` (as a load balancer spreading connections would);
    ``seeded`` is called when every client has stored its facts, as the measured part begins."""
    samples: list[dict[str, Any]] = []
    headers = {"Authorization": f"Bearer {token}"}
    # aiohttp, not httpx: on this 2-core machine the generator shares the cores with the server, and httpx's client
    # spent 3.3 ms of CPU per request against aiohttp's 0.4 (50 clients, 2 workers: 215 against 435 searches/s)
    https = [aiohttp.ClientSession(base_url=url, headers=headers, timeout=aiohttp.ClientTimeout(total=120),
                                   connector=aiohttp.TCPConnector(limit=args.clients)) for url in urls]  # fmt: skip
    try:
        http_of = [https[n % len(https)] for n in range(args.clients)]
        await asyncio.gather(*(seed(http_of[n], n, args) for n in range(args.clients)))  # not measured
        if seeded is not None:
            seeded()
        started = time.monotonic()
        deadline = started + args.time_limit
        tasks = [asyncio.create_task(client(http_of[n], n, args, deadline, samples)) for n in range(args.clients)]
        done, pending = await asyncio.wait(tasks, timeout=args.time_limit + 60)
        for task in pending:
            task.cancel()
        elapsed = time.monotonic() - started
    finally:
        for http in https:
            await http.close()
    failures = [str(task.exception()) for task in done if task.exception() is not None]
    return summarise(samples, elapsed, args, failures, timed_out=len(pending) > 0 or elapsed >= args.time_limit)


def summarise(
    samples: list[dict[str, Any]], elapsed: float, args: argparse.Namespace, failures: list[str], *, timed_out: bool
) -> dict[str, Any]:
    # A 503 is the overload guard shedding load on purpose (with Retry-After): counted apart from errors.
    errors = [s for s in samples if s["error"] is not None and s["status"] != 503]
    shed = [s for s in samples if s["status"] == 503]
    answered = [s for s in samples if s["status"] != 503]
    by_op = {
        op: {"requests": len(ms), **percentiles(ms)}
        for op in ("add", "search")
        if (ms := [s["ms"] for s in answered if s["op"] == op])
    }
    return {
        "config": {k: v for k, v in vars(args).items() if k != "out"},
        "planned_requests": args.clients * args.requests,
        "completed_requests": len(samples),
        "errors": len(errors) + len(failures),
        "error_examples": [e["error"] for e in errors[:5]] + failures[:5],
        "status_counts": dict(Counter(str(s["status"]) for s in samples)),
        "elapsed_s": round(elapsed, 2),
        "throughput_rps": round(len(answered) / elapsed, 1) if elapsed else 0.0,
        "shed_503": len(shed),
        "search_rps": round(sum(1 for s in answered if s["op"] == "search") / elapsed, 1) if elapsed else 0.0,
        "timed_out": timed_out,
        "latency_ms": {"all": percentiles([s["ms"] for s in answered]), **by_op},
    }


def _processes(cfg: dict[str, Any]) -> str:
    servers, workers = cfg.get("servers", 1), cfg.get("workers", 1)
    described = f"{workers} worker process{'es' if workers > 1 else ''}"
    return described if servers == 1 else f"{servers} serve commands of {described} each"


def markdown(result: dict[str, Any]) -> str:
    cfg = result["config"]
    lines = [
        f"# Service load: {cfg['clients']} clients × {cfg['requests']} requests "
        f"({cfg['add_ratio']:.0%} add / {1 - cfg['add_ratio']:.0%} search)",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        *([f"Server settings: {', '.join(cfg['setting'])}", ""] if cfg.get("setting") else []),
        "Queries: "
        + (
            f"each client cycles through {cfg['query_pool']} questions"
            if cfg.get("query_pool")
            else "every search asks a question its client has not asked before"
        )
        + ".",
        "",
        f"Completed {result['completed_requests']} of {result['planned_requests']} requests in "
        f"{result['elapsed_s']} s on {_processes(cfg)} ({cfg.get('db') or 'SQLite'}): "
        f"**{result['throughput_rps']} requests/s** answered ({result.get('search_rps')} searches/s), "
        f"**{result['errors']} errors**, {result.get('shed_503', 0)} shed with 503"
        f"{' (stopped at the time limit)' if result['timed_out'] else ''}.",
        "",
        "| operation | requests | p50 ms | p95 ms | p99 ms | mean ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for op, stats in result["latency_ms"].items():
        count = stats.get("requests", result["completed_requests"])
        lines.append(
            f"| {op} | {count} | {stats['p50_ms']:.1f} | {stats['p95_ms']:.1f} | "
            f"{stats['p99_ms']:.1f} | {stats['mean_ms']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=200, help="per client")
    parser.add_argument("--add-ratio", type=float, default=0.3)
    parser.add_argument("--seed-facts", type=int, default=20, help="facts stored per user before measuring")
    parser.add_argument(
        "--query-pool",
        type=int,
        default=0,
        help="questions each client cycles through; 0: a new one for every search (until 2026-12-06: 50)",
    )
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds; the run stops there")
    parser.add_argument("--blas-threads", type=int, default=1, help="OPENBLAS_NUM_THREADS of the server; 0: unset")
    parser.add_argument("--workers", type=int, default=1, help="memstrata serve --workers: processes on one port")
    parser.add_argument(
        "--servers",
        type=int,
        default=1,
        help="memstrata serve commands on the one store, each its own port (clients "
        "spread over them as a load balancer would)",
    )
    parser.add_argument("--db", default=None, help="a postgresql:// URL (default: a fresh SQLite file)")
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="SECTION.NAME=VALUE",
        help="a server setting, e.g. embedder.query_batch=1 (repeatable)",
    )
    parser.add_argument("--suffix", default="", help="added to the result file names")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    machine = machine_facts()
    with tempfile.TemporaryDirectory(prefix="memstrata-load-") as tmp:
        token = make_key(Path(tmp))
        servers = [start_server(Path(tmp), args.blas_threads, args.db, args.setting, args.workers)
                   for _ in range(args.servers)]  # fmt: skip
        try:
            result = asyncio.run(run_load([url for _, url in servers], token, args))
        finally:
            for server, _ in servers:
                server.terminate()
                server.wait(timeout=30)
    result["machine"] = machine
    write_json_and_markdown(result, markdown(result), args.out, f"service-load{args.suffix}")
    return 0 if result["errors"] == 0 and not result["timed_out"] else 1


if __name__ == "__main__":
    sys.exit(main())
