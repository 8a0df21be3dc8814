"""`memstrata keys ...` and `memstrata serve` as a user runs them: real processes, a real port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from service_support import free_port

# The console script's entry point (see test_service_mcp.CLI_ARGS for why not `-m memstrata.cli.app`).
CLI = [sys.executable, "-m", "memstrata"]


def cli(tmp_path: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    result = subprocess.run(
        [*CLI, "--db", str(tmp_path / "svc.db"), *args], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert (result.returncode == 0) == ok, result.stderr
    return result


def cli_json(tmp_path: Path, *args: str) -> Any:
    return json.loads(cli(tmp_path, "--json", *args).stdout)


def test_keys_commands(tmp_path: Path) -> None:
    created = cli_json(tmp_path, "keys", "create", "--tenant", "acme", "--user", "ann", "--user", "bob", "--name", "ci")
    assert created["token"].startswith(f"msk_{created['id']}_") and created["user_ids"] == ["ann", "bob"]
    assert (tmp_path / "keys.db").is_file()  # beside the store by default

    listed = cli_json(tmp_path, "keys", "list")
    assert [key["id"] for key in listed] == [created["id"]] and "token" not in listed[0]
    table = cli(tmp_path, "keys", "list").stdout
    assert created["id"] in table and created["token"] not in table

    # Each CLI start costs seconds, so the error paths are covered on KeyStore itself (test_service_tenancy).
    assert cli_json(tmp_path, "keys", "revoke", created["id"])["revoked_at"]


def test_serve_answers_with_keys_and_stops_cleanly(tmp_path: Path) -> None:
    token = cli_json(tmp_path, "keys", "create", "--tenant", "acme")["token"]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    server = subprocess.Popen(
        [*CLI, "--db", str(tmp_path / "svc.db"), "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            try:
                if httpx.get(f"{url}/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "serve did not come up"
            time.sleep(0.2)
        assert httpx.get(f"{url}/v1/whoami").status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        added = httpx.post(f"{url}/v1/memories", json={"user_id": "u", "text": "served"}, headers=auth, timeout=60)
        assert added.status_code == 201
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=30)
    assert server.returncode == 0, output
    assert "memstrata on http://127.0.0.1" in output and token not in output
    assert "POST /v1/memories" not in output  # no access log unless asked for (server.access_log)


def test_keys_of_a_postgres_store_live_in_the_user_data_dir(tmp_path: Path) -> None:
    """ "keys.db beside the store" was, for a PostgreSQL URL, a folder named after the URL (password included)
    under the working directory: workers started from two directories held different keys (401s)."""
    url = "postgresql://memstrata:s3cretPW@db.invalid:5432/memstrata"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env.update({"MEMSTRATA_STORE__PATH": url, "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path)})
    work = tmp_path / "work"
    work.mkdir()
    for args in (["keys", "create", "--tenant", "acme"], ["keys", "list"]):
        done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, cwd=work, check=True)
        assert "s3cretPW" not in done.stdout + done.stderr
    assert list(work.iterdir()) == []
    assert (tmp_path / "data" / "memstrata" / "keys.db").is_file()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and "spawn_main" in (stat.parent / "cmdline").read_bytes().decode(errors="replace"):
            found.append(int(stat.parent.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads worker processes from /proc")
def test_serve_with_two_workers_answers_from_both_on_one_port(tmp_path: Path) -> None:
    """`serve --workers 2`: two processes share the port and the store; what one stored, the other finds;
    Ctrl-C stops all of them; the workers log at the command's level (-v)."""
    token = cli_json(tmp_path, "keys", "create", "--tenant", "acme")["token"]
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    server = subprocess.Popen(
        [*CLI, "-v", "--db", str(tmp_path / "svc.db"), "serve", "--port", str(port), "--workers", "2", "--access-log"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    url, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers) < 2 or not _ready(url):
            assert server.poll() is None, server.stdout.read() if server.stdout else ""
            assert time.monotonic() < deadline, "serve --workers 2 did not come up"
            workers = _children(server.pid)
            time.sleep(0.3)
        assert len(workers) == 2
        # the port opens when both are ready: a worker listening alone took every connection made meanwhile
        assert _listening_sockets(port) == 2
        texts = [f"我的第{n}只猫叫团子{n}" for n in range(8)] + [
            f"My dog number {n} is called Rex{n}" for n in range(8)
        ]
        for text in texts:  # a new connection each: the kernel hands them to either worker
            added = httpx.post(f"{url}/v1/memories", json={"user_id": "u", "text": text}, headers=auth, timeout=60)
            assert added.status_code == 201, added.text
        before = [_cpu_seconds(pid) for pid in workers]

        def top_hit(text: str) -> str:
            found = httpx.post(f"{url}/v1/memories/search", json={"user_id": "u", "query": text, "limit": 3},
                               headers=auth, timeout=60).json()  # fmt: skip
            return str(found[0]["memory"]["text"])

        with ThreadPoolExecutor(8) as pool:  # concurrent connections: a busy worker leaves the next to the other
            assert list(pool.map(top_hit, texts * 4)) == texts * 4
        assert all(_cpu_seconds(pid) - spent >= 0.02 for pid, spent in zip(workers, before, strict=True))
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=60)
    assert server.returncode == 0, output
    assert "2 worker processes" in output and token not in output
    assert output.count("memstrata.service.workers: worker ") == 2, output  # -v reaches the workers' logging
    assert output.count('"POST /v1/memories/search HTTP/1.1" 200') == len(texts) * 4  # --access-log
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)


def _listening_sockets(port: int) -> int:
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for row in rows if row.split()[1].endswith(f":{port:04X}") and row.split()[3] == "0A")


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ready", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_one_worker_process_holds_the_vault_watch_lock(tmp_path: Path) -> None:
    """Of several workers only the first to lock runs the vault watcher (two would sync the same notes at once)."""
    from memstrata.service.workers import _held, holds_lock

    lock = tmp_path / "data" / "vault-watch.lock"
    assert holds_lock(lock)
    assert not holds_lock(lock)  # flock: another open of the file, as another worker's, is refused
    _held.pop().close()  # the holder exits
    assert holds_lock(lock)
    _held.pop().close()


def test_a_serving_process_reads_the_model_and_freezes_its_start_up_before_the_port_opens(tmp_path: Path) -> None:
    import gc

    from memstrata import Memory
    from memstrata.patterns import compile_all
    from memstrata.service.app import ready_to_serve

    with Memory.from_config({"store": {"path": str(tmp_path / "m.db")}, "llm": {"provider": "rules"}}) as memory:
        try:
            ready_to_serve(memory)
            assert gc.get_freeze_count() > 0  # the cyclic collector no longer walks what start-up made
            assert getattr(memory.embedder, "_model", None) is not None  # the weights are read
            assert compile_all() == 0  # and the text rules' patterns compiled (memstrata/patterns.py)
        finally:
            gc.unfreeze()  # this test process goes on collecting as before
