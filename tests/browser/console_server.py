"""`memstrata serve` as a real subprocess on a free loopback port, for the console tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

import memstrata

SOURCE_ROOT = Path(memstrata.__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(config: Path, *extra: str, log: Path) -> Iterator[str]:
    """Run `memstrata --config CONFIG serve --port N` until the block ends; yields its base URL."""
    port = free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMSTRATA_")}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(SOURCE_ROOT), env.get("PYTHONPATH", "")])),
        OPENBLAS_NUM_THREADS="1",
        NO_COLOR="1",
    )
    command = [sys.executable, "-m", "memstrata", "--config", str(config), "serve", "--port", str(port), *extra]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=config.parent)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_ready(url, process, log)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"memstrata serve exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"memstrata serve did not answer within {timeout_s} s:\n{log.read_text(errors='replace')}")
