"""Rich progress bars for long operations (reindex, copy, import, maintenance), on stderr so --json
output stays clean, and silent off a terminal or when asked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from memstrata.cli.render import err_console


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
