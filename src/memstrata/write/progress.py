"""Progress of the write path, for a terminal or a log: which stage, how far, how long so far.

A hook is any callable taking a :class:`Progress`; it runs in the worker's thread and must be quick. The CLI
renders it (model loading, turn i of n, seconds); the library never prints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Stage = Literal["load_model", "extract", "judge", "write", "done", "failed"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Progress:
    stage: Stage
    done: int  # units finished in this stage: turns (extract), facts (judge), jobs (done / failed)
    total: int
    seconds: float  # since the batch started
    jobs: tuple[str, ...] = ()  # ids of the jobs being processed
    detail: str = ""

    def describe(self) -> str:
        units = {"extract": "turns", "judge": "facts", "done": "jobs", "failed": "jobs"}.get(self.stage, "")
        count = f" {self.done}/{self.total} {units}" if self.total else ""
        extra = f": {self.detail}" if self.detail else ""
        return f"{self.stage}{count} ({self.seconds:.1f} s){extra}"


ProgressHook = Callable[[Progress], None]


def quiet(progress: Progress) -> None:
    """The default hook: nothing on screen, a debug line in the log."""
    log.debug("write path: %s", progress.describe())


def safe(hook: ProgressHook) -> ProgressHook:
    """A hook that raises must not fail the job it reports on."""

    def call(progress: Progress) -> None:
        try:
            hook(progress)
        except Exception:
            log.exception("the progress hook raised; ignored")

    return call
