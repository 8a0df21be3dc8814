"""Document conversion in a child process, so a hostile or broken file costs one error, not the batch.

Parsers for PDF and Office formats can hang on a malformed file, allocate without bound on a
decompression bomb, or crash in native code. The child converts one file at a time under an
address-space cap (``RLIMIT_AS``); the parent waits at most ``timeout_s`` and kills it past that.
A dead or killed child is replaced for the next file. The child is started once and reused, because
importing MarkItDown and its parsers costs about a second.

The child is ``python -m memstrata.knowledge.sandbox``, talking JSON lines over its standard input and a copy
of its standard output (what parsers print goes to standard error). A multiprocessing "spawn" child imported the
caller's main module first: a script calling ``memory.ingest()`` without an ``if __name__ == "__main__":`` guard
ran again, adds and deletes included, inside every converter.
"""

from __future__ import annotations

import json
import os
import resource
import select
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from memstrata.knowledge.limits import IngestLimits, SourceRejected

_MB = 1024 * 1024


def _serve(requests: IO[str], replies: IO[str], memory_mb: int) -> None:
    """The child's loop: {"path", "format"} in, {"ok": true, "markdown", "title"} or {"ok": false, "error"} out."""
    from memstrata.knowledge.convert import markitdown_convert

    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * _MB, memory_mb * _MB))
    for line in requests:
        request = json.loads(line)
        try:
            markdown, title = markitdown_convert(Path(request["path"]), request["format"])
            reply: dict[str, Any] = {"ok": True, "markdown": markdown, "title": title}
        except MemoryError:
            reply = {"ok": False, "error": f"converting needed more than the {memory_mb} MB memory cap "
                                           "(ingest.memory_mb)"}  # fmt: skip
        except Exception as exc:  # any parser failure is this file's error, reported to the caller
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:1000]}
        replies.write(json.dumps(reply, ensure_ascii=False) + "\n")
        replies.flush()


class ConversionSandbox:
    def __init__(self, limits: IngestLimits | None = None) -> None:
        self.limits = limits or IngestLimits()
        self._process: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._stop()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "memstrata.knowledge.sandbox", str(self.limits.memory_mb)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
        )  # fmt: skip
        return self._process

    def convert(self, path: Path, fmt: str) -> tuple[str, str | None]:
        """Raw Markdown and title, or :class:`SourceRejected` saying why this file could not be converted."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps({"path": str(path), "format": fmt}) + "\n")
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died starting: read below reports it
        ready, _, _ = select.select([process.stdout], [], [], self.limits.timeout_s)
        if not ready:
            self._stop()
            raise SourceRejected(
                f"converting {path.name} took longer than {self.limits.timeout_s:g} s and was stopped "
                "(a malformed or very large file; raise ingest.timeout_s if it is genuine)"
            )
        line = process.stdout.readline()
        if not line:
            code = self._stop()
            raise SourceRejected(
                f"the converter died on {path.name} (exit code {code}): the file is malformed or needs more "
                f"than the {self.limits.memory_mb} MB memory cap"
            ) from None
        reply = json.loads(line)
        if not reply["ok"]:
            raise SourceRejected(f"could not convert {path.name}: {reply['error']}")
        return str(reply["markdown"]), reply["title"]

    def _stop(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        process.wait(5)
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()
        return process.returncode

    def close(self) -> None:
        process = self._process
        if process is not None and process.poll() is None and process.stdin is not None:
            try:
                process.stdin.close()  # end of requests: the child's loop ends
                process.wait(2)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                pass
        self._stop()

    def __enter__(self) -> ConversionSandbox:
        return self

    def __exit__(self, *exc: object | TracebackType | None) -> None:
        self.close()


def _main() -> None:
    """The child: replies go to a copy of standard output; a parser printing to standard output writes to stderr."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin, replies, int(sys.argv[1]))


if __name__ == "__main__":
    _main()
