"""Document conversion in a child process, so a hostile or broken file costs one error, not the batch.

Parsers for PDF and Office formats can hang on a malformed file, allocate without bound on a
decompression bomb, or crash in native code. The child converts one file at a time under an
address-space cap (``RLIMIT_AS``); the parent waits at most ``timeout_s`` and kills it past that.
A dead or killed child is replaced for the next file. The child is started once and reused, because
importing MarkItDown and its parsers costs about a second.
"""

from __future__ import annotations

import multiprocessing
import resource
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import TracebackType
from typing import Any

from memstrata.knowledge.convert import markitdown_convert
from memstrata.knowledge.limits import IngestLimits, SourceRejected

_MB = 1024 * 1024


def _serve(conn: Connection, memory_mb: int) -> None:
    """The child's loop: (path, format) in, ("ok", markdown, title) or ("error", message) out."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * _MB, memory_mb * _MB))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        path, fmt = request
        try:
            markdown, title = markitdown_convert(Path(path), fmt)
            conn.send(("ok", markdown, title))
        except MemoryError:
            conn.send(("error", f"converting needed more than the {memory_mb} MB memory cap (ingest.memory_mb)"))
        except Exception as exc:  # any parser failure is this file's error, reported to the caller
            conn.send(("error", f"{type(exc).__name__}: {exc}"[:1000]))


class ConversionSandbox:
    def __init__(self, limits: IngestLimits | None = None) -> None:
        self.limits = limits or IngestLimits()
        self._context = multiprocessing.get_context("spawn")  # no fork of a parent that runs threads
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._process is not None and self._process.is_alive() and self._conn is not None:
            return self._conn
        self._stop()
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(child, self.limits.memory_mb), daemon=True)
        process.start()
        child.close()
        self._process, self._conn = process, parent
        return parent

    def convert(self, path: Path, fmt: str) -> tuple[str, str | None]:
        """Raw Markdown and title, or :class:`SourceRejected` saying why this file could not be converted."""
        conn = self._start()
        conn.send((str(path), fmt))
        if not conn.poll(self.limits.timeout_s):
            self._stop()
            raise SourceRejected(
                f"converting {path.name} took longer than {self.limits.timeout_s:g} s and was stopped "
                "(a malformed or very large file; raise ingest.timeout_s if it is genuine)"
            )
        try:
            reply: tuple[Any, ...] = conn.recv()
        except (EOFError, OSError):
            code = self._stop()
            raise SourceRejected(
                f"the converter died on {path.name} (exit code {code}): the file is malformed or needs more "
                f"than the {self.limits.memory_mb} MB memory cap"
            ) from None
        if reply[0] == "error":
            raise SourceRejected(f"could not convert {path.name}: {reply[1]}")
        return str(reply[1]), reply[2]

    def _stop(self) -> int | None:
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is None:
            return None
        if process.is_alive():
            process.kill()
        process.join(5)
        return process.exitcode

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            try:
                self._conn.send(None)
                self._process.join(2)
            except (BrokenPipeError, OSError):
                pass
        self._stop()

    def __enter__(self) -> ConversionSandbox:
        return self

    def __exit__(self, *exc: object | TracebackType | None) -> None:
        self.close()
