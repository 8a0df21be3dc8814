"""Progress of an ingestion run: files (with ETA), pages, chunks and embeddings.

The pipeline reports through a small protocol; the CLI shows rich progress bars, tests and the
REST handler pass ``NullProgress``. Page, chunk and embedding totals are unknown until each file is
converted (the corpus is streamed, never loaded at once), so those bars count up while the file bar
carries the estimate.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ProgressSink(Protocol):
    def start(self, files: int) -> None: ...

    def file_started(self, name: str) -> None: ...

    def converted(self, pages: int) -> None: ...

    def chunked(self, chunks: int) -> None: ...

    def embedded(self, texts: int) -> None: ...

    def file_done(self) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    def start(self, files: int) -> None:
        pass

    def file_started(self, name: str) -> None:
        pass

    def converted(self, pages: int) -> None:
        pass

    def chunked(self, chunks: int) -> None:
        pass

    def embedded(self, texts: int) -> None:
        pass

    def file_done(self) -> None:
        pass

    def finish(self) -> None:
        pass


class RichProgress:
    """Four bars on stderr: files has a total and an ETA; pages, chunks and embeddings count up."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description:<10}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[current]}"),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}
        self._chunks_total = 0

    def start(self, files: int) -> None:
        self._progress.start()
        self._tasks["files"] = self._progress.add_task("files", total=files, current="")
        for name in ("pages", "chunks", "embeddings"):
            self._tasks[name] = self._progress.add_task(name, total=None, current="")

    def file_started(self, name: str) -> None:
        self._progress.update(self._tasks["files"], current=name)

    def converted(self, pages: int) -> None:
        self._progress.advance(self._tasks["pages"], pages)

    def chunked(self, chunks: int) -> None:
        self._chunks_total += chunks
        self._progress.advance(self._tasks["chunks"], chunks)
        self._progress.update(self._tasks["embeddings"], total=self._chunks_total)

    def embedded(self, texts: int) -> None:
        self._progress.advance(self._tasks["embeddings"], texts)

    def file_done(self) -> None:
        self._progress.advance(self._tasks["files"], 1)

    def finish(self) -> None:
        if "files" in self._tasks:
            self._progress.update(self._tasks["files"], current="")
        self._progress.stop()

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object | TracebackType | None) -> None:
        self._progress.stop()
