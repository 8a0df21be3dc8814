"""The CLI as a user runs it, for the tests: its own entry point, a real store, the exit status and both streams.

Most commands run in the test process through ``memstrata.cli.app.main``, with the command's own argv, environment,
working directory and standard streams: a command as its own process costs 0.6-1.2 s of start-up, and the suite runs
a few hundred of them. Those whose behaviour belongs to a process of their own (a server, stdio MCP, the demo's
temporary directory) run as ``python -m memstrata``, as does any call given ``own_process=True``.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import memstrata
from memstrata.cli.app import main

CLI = [sys.executable, "-m", "memstrata"]
SOURCE = str(Path(memstrata.__file__).resolve().parents[1])
# Commands that serve, read stdio as a protocol, or choose a temporary directory from TMPDIR (read once a process).
OWN_PROCESS = frozenset({"serve", "mcp", "ui", "demo"})


def run(
    tmp_path: Path,
    *args: str,
    ok: bool = True,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    own_process: bool = False,
) -> subprocess.CompletedProcess[str]:
    extra = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env["MEMSTRATA_STORE__PATH"] = str(tmp_path / "cli.db")
    env["MEMSTRATA_LLM__PROVIDER"] = "rules"  # the bundled model (2 GB) is not what these tests are about
    # The subprocess runs the code under test (a relative PYTHONPATH=src would not survive the cwd change).
    env["PYTHONPATH"] = os.pathsep.join([SOURCE, *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    if own_process or OWN_PROCESS & set(args):
        result = subprocess.run(
            [*CLI, *args], capture_output=True, text=True, env=env, cwd=tmp_path, input=stdin, timeout=120
        )
    else:
        result = _in_process(list(args), env, tmp_path, stdin)
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def _in_process(args: list[str], env: dict[str, str], cwd: Path, stdin: str | None) -> subprocess.CompletedProcess[str]:
    """``memstrata *args`` through the CLI's entry point in this process; its exit status as a process would have
    it (an exception main() lets through prints its traceback and exits 1, as Python does)."""
    out, err = _text_stream(), _text_stream()
    code = 0
    with (
        _environment(env),
        _logging_kept(),
        contextlib.chdir(cwd),
        mock.patch.object(sys, "argv", ["memstrata", *args]),
        mock.patch.object(sys, "stdin", _text_stream(stdin or "")),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        try:
            main()
        except SystemExit as exit_:
            if isinstance(exit_.code, str):
                print(exit_.code, file=err)
            code = exit_.code if isinstance(exit_.code, int) else 0 if exit_.code is None else 1
        except Exception:
            traceback.print_exc(file=err)
            code = 1
    return subprocess.CompletedProcess([*CLI, *args], code, _text(out), _text(err))


def _text_stream(text: str = "") -> io.TextIOWrapper:
    """A standard stream with a byte buffer underneath, as a process's are."""
    return io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode()


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """``env`` as the process environment for the command, and the test's own back afterwards. Changed key by key,
    never cleared: a thread of this process (a scripted model server, a store's worker) never sees it empty."""
    saved = dict(os.environ)
    _become(env)
    try:
        yield
    finally:
        _become(saved)


def _become(env: dict[str, str]) -> None:
    for key in set(os.environ) - set(env):
        del os.environ[key]
    os.environ.update(env)


@contextlib.contextmanager
def _logging_kept() -> Iterator[None]:
    """The CLI configures the root logger at its edge (a handler on its own stderr): put it back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def run_json(tmp_path: Path, *args: str) -> Any:
    return json.loads(run(tmp_path, "--json", *args).stdout)
