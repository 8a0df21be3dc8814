"""`memstrata ui`: print the console's address (and open it), starting the service when none answers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

pytest.importorskip("uvicorn", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from service_support import Service, free_port
from typer.testing import CliRunner

import memstrata
from memstrata.cli.app import app
from memstrata.cli.ui_cmds import console_url
from memstrata.errors import InvalidInputError

SOURCE_ROOT = Path(memstrata.__file__).resolve().parents[1]


def test_the_address_a_browser_uses() -> None:
    assert console_url("127.0.0.1", 8765) == "http://127.0.0.1:8765/"
    assert console_url("0.0.0.0", 9000) == "http://127.0.0.1:9000/"  # a wildcard bind is reached on loopback
    assert console_url("::1", 9000) == "http://[::1]:9000/"


def test_ui_prints_the_console_of_a_running_service(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    port = str(urlsplit(svc.url).port)
    result = CliRunner().invoke(app, ["ui", "--host", "127.0.0.1", "--port", port])
    assert result.exit_code == 0, result.output
    assert f"memstrata console: {svc.url}/" in result.output
    assert "no display here" in result.output  # nothing to open a browser on: it says so instead


def test_ui_without_a_service_and_without_serving_says_what_to_do() -> None:
    result = CliRunner().invoke(app, ["ui", "--port", str(free_port()), "--no-serve"])
    assert isinstance(result.exception, InvalidInputError)
    assert "start one with `memstrata serve`" in str(result.exception)


def test_ui_starts_the_service_and_the_console_answers(tmp_path: Path) -> None:
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMSTRATA_") and k not in ("DISPLAY", "WAYLAND_DISPLAY")
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE_ROOT), env.get("PYTHONPATH")]))  # this checkout
    command = [sys.executable, "-m", "memstrata", "--db", str(tmp_path / "ui.db"), "ui", "--port", str(port),
               "--allow-anonymous-loopback"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 90
        printed = ""
        while "memstrata console:" not in printed and time.monotonic() < deadline and process.poll() is None:
            printed += process.stdout.readline()
        assert f"memstrata console: http://127.0.0.1:{port}/" in printed, printed
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
        assert page.status_code == 200 and "/console/js/app.js" in page.text
        whoami = httpx.get(f"http://127.0.0.1:{port}/v1/whoami", timeout=10)  # keyless loopback, as asked
        assert whoami.status_code == 200 and whoami.json()["key_id"] is None
    finally:
        process.terminate()
        process.wait(timeout=20)
