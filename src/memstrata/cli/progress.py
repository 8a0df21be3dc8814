"""Rich progress bars for long operations (reindex, copy, import, maintenance), on stderr so --json
output stays clean, and silent off a terminal or when asked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memstrata.cli.render import err_console
from memstrata.write.progress import Progress as JobProgress


@contextmanager
def progress_bar(label: str, *, total: int | None, quiet: bool = False) -> Iterator[Callable[[int], None]]:
    """Yields ``advance(n)``; with ``total=None`` the bar counts without an ETA."""
    if quiet or not err_console.is_terminal:
        yield lambda _n: None
        return
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    if total is not None:
        columns.append(TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=False) as progress:
        task = progress.add_task(label, total=total)
        yield lambda n: progress.advance(task, n)


@contextmanager
def progress_counters(*, quiet: bool = False) -> Iterator[Callable[[str, int], None]]:
    """Yields ``update(label, done)``: one counting row per label (tables of a copy, stages of a job)."""
    if quiet or not err_console.is_terminal:
        yield lambda _label, _done: None
        return
    columns = [TextColumn("{task.description:>18}"), BarColumn(), TextColumn("{task.completed:,} rows"),
               TimeElapsedColumn()]  # fmt: skip
    with Progress(*columns, console=err_console, transient=False) as progress:
        tasks: dict[str, TaskID] = {}

        def update(label: str, done: int) -> None:
            if label not in tasks:
                tasks[label] = progress.add_task(label, total=None)
            progress.update(tasks[label], completed=done)

        yield update


@contextmanager
def job_progress(*, quiet: bool = False) -> Iterator[Callable[[JobProgress], None]]:
    """Yields a write-path progress hook that shows the current stage of extraction (model loading, turn i of
    n, facts judged, seconds so far) on one live status line."""
    if quiet or not err_console.is_terminal:
        yield lambda _progress: None
        return
    with err_console.status("extracting facts…") as status:
        yield lambda progress: status.update(progress.describe())
