"""``memstrata serve --workers N``: N processes answer on one port.

A search is mostly Python, and a process runs one Python thread at a time, so one process uses about one core
however many requests it holds (50 REST clients on a 2-core machine: 1.15 cores, measured ad hoc). A second process
uses the second core (bench/results/2026-12-06-service-workers-*.md).

Each worker binds the port itself with SO_REUSEPORT, so the kernel spreads new connections evenly over the workers.
With one listening socket shared by all (uvicorn's own ``workers``), a burst of connections went mostly to one
worker: in an ad hoc run of bench.service_load, 2 workers answered no more searches than 1, with p95 650 ms against
370. Each worker builds its own Memory from the settings the command resolved (its own embedder, indexes and database
connections); the supervisor only starts them, passes on a stop, and stops the rest when one dies.

Every worker may answer any request: the store is shared (SQLite in WAL mode across processes, or PostgreSQL),
MCP is stateless, and queued jobs are claimed under a lock. What must run once is the vault watcher: the first
worker to lock ``vault-watch.lock`` beside the API keys runs it, and the lock goes with the process.
"""

from __future__ import annotations

import fcntl
import json
import logging
import multiprocessing
import os
import signal
import socket
from contextlib import suppress
from multiprocessing import connection
from multiprocessing.synchronize import Barrier as BarrierType
from pathlib import Path
from threading import BrokenBarrierError
from types import FrameType
from typing import IO, Any

from memstrata.config import ServerSettings

log = logging.getLogger(__name__)
_held: list[IO[str]] = []  # the open lock file of a worker that watches the vault: open as long as the process


def worker_plan(settings: dict[str, Any], server: ServerSettings, keys_path: Path, tenant: str | None,
                log_level: int = logging.WARNING) -> str:  # fmt: skip
    """What every worker process builds its app from (passed to it, never through the environment: it may hold a
    provider's API key, and a worker's own child processes, the document converter's, inherit the environment).
    ``log_level``: the command's (``-v``, ``-vv``); a spawned process starts with Python's logging unset."""
    return json.dumps({"settings": settings, "server": server.model_dump(mode="json"), "keys": str(keys_path),
                       "tenant": tenant, "log_level": log_level})  # fmt: skip


def serve_workers(plan: str, workers: int) -> int:
    """Start ``workers`` processes and wait for them. A SIGINT (Ctrl-C) or SIGTERM to this process stops them
    gracefully. When one exits, the rest are stopped: a supervisor above (systemd, a
    container runtime) restarts the whole service. Returns the exit status."""
    spawn = multiprocessing.get_context("spawn")  # a fresh interpreter each: no threads or connections inherited
    ready = spawn.Barrier(workers)
    processes = [spawn.Process(target=run_worker, args=(plan, ready), name=f"memstrata-worker-{n}")
                 for n in range(workers)]  # fmt: skip
    for process in processes:
        process.start()

    def stop(signum: int, _: FrameType | None) -> None:
        # SIGTERM: uvicorn finishes the requests in hand, then exits; after a Ctrl-C that reached the workers too
        # (one process group), SIGTERM does not force them as a second SIGINT would
        for process in processes:
            if process.is_alive():
                process.terminate()

    previous = signal.signal(signal.SIGTERM, stop), signal.signal(signal.SIGINT, stop)
    try:
        connection.wait([process.sentinel for process in processes])  # the first to end
        stopped = [process.exitcode in _STOPPED for process in processes if process.exitcode is not None]
        stop(signal.SIGTERM, None)
        for process in processes:
            process.join()
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
    return 0 if all(stopped) else 1  # a worker that ended of itself (a crash, a port taken) fails the command


_READY_TIMEOUT_S = 600  # the slowest worker's start (a cold disk, a large store's schema check)

# How a worker stopped by a signal ends: uvicorn shuts down gracefully, then ends of the signal it caught.
_STOPPED = (0, -signal.SIGTERM, -signal.SIGINT)


def run_worker(plan_text: str, ready: BarrierType | None = None) -> None:
    """One worker process: its own Memory and key store, the app, uvicorn on its own SO_REUSEPORT socket, bound once
    every worker is ready (``ready``): the kernel routes a connection to the sockets bound when it arrives, and clients
    keep their connections, so a worker that bound first took every connection of clients that came meanwhile (in one
    bench round in five, all 50: 374 against 580 searches/s; bench/results/2026-12-06-service-gc-freeze-gc-r5.md)."""
    import uvicorn

    from memstrata.api.keys import KeyStore
    from memstrata.config import load_settings
    from memstrata.memory import Memory
    from memstrata.service.app import create_app, ready_to_serve, uvicorn_options

    plan = json.loads(plan_text)
    logging.basicConfig(level=plan["log_level"], format="%(name)s: %(message)s", force=True)  # stderr, as the CLI's
    server = ServerSettings.model_validate(plan["server"])
    opened = Memory.from_config(load_settings(plan["settings"]))
    keys = KeyStore(Path(plan["keys"]))
    try:
        memory = opened.for_tenant(plan["tenant"]) if plan["tenant"] is not None else opened
        watch = holds_lock(Path(plan["keys"]).parent / "vault-watch.lock")
        app = create_app(memory, server, keys=keys, watch_vault=watch)
        ready_to_serve(memory)
        if ready is not None:
            with suppress(BrokenBarrierError):  # a worker that failed to start stops the others anyway
                ready.wait(timeout=_READY_TIMEOUT_S)
        log.info("worker %d ready on %s:%d", os.getpid(), server.host, server.port)
        config = uvicorn.Config(app, host=server.host, port=server.port, log_level="info", **uvicorn_options(server))
        uvicorn.Server(config).run(sockets=[shared_port(server.host, server.port)])
    finally:
        keys.close()
        opened.close()


def shared_port(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` that every worker binds alike (SO_REUSEPORT)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def holds_lock(path: Path) -> bool:
    """Whether this process now holds the exclusive lock on ``path`` (kept until it exits); another process
    holding it already: False."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("a", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return False
    _held.append(handle)
    return True
