"""Run a call on several threads at once and collect what each raised (a race is the point of such a test)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def failures_at_once(call: Callable[[], object], threads: int) -> list[BaseException]:
    """``call`` on ``threads`` threads released together; every exception any of them raised."""
    start = threading.Barrier(threads)
    failures: list[BaseException] = []

    def run() -> None:
        start.wait()
        try:
            call()
        except BaseException as exc:  # every failure is the finding
            failures.append(exc)

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return failures
