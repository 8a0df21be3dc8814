"""Running queued jobs: in the caller's thread (flush) or in one background thread per Memory.

Jobs live in the store, so any process can run them and a crash loses nothing: a claimed job
carries a lease, and a job whose lease ran out is claimed again by whoever looks next.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from memstrata.types import AdminScope, JobStatus
from memstrata.write.pipeline import WriteDeps, process_jobs
from memstrata.write.progress import ProgressHook

log = logging.getLogger(__name__)


class JobRunner:
    def __init__(self, deps: WriteDeps, *, lease_s: float, batch_jobs: int) -> None:
        self.deps = deps
        self.lease_s = lease_s
        self.batch_jobs = batch_jobs

    def run_once(self, *, progress: ProgressHook | None = None) -> int:
        """Claim and process one batch of jobs (one scope). Returns how many jobs it handled.

        ``progress`` (stage, i of n, seconds) replaces the default hook for this batch, e.g. a CLI's renderer.
        A job that fails for any reason is marked failed with its error; the others of the batch still run."""
        now = self.deps.clock()
        jobs = self.deps.store.claim_jobs(now, now + timedelta(seconds=self.lease_s), self.batch_jobs)
        if jobs:
            process_jobs(self.deps if progress is None else replace(self.deps, progress=progress), jobs)
        return len(jobs)

    def drain(
        self, *, scope: AdminScope | None = None, timeout_s: float | None = None, progress: ProgressHook | None = None
    ) -> None:
        """Process until nothing is queued, then wait for jobs other workers are still running."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            if self.run_once(progress=progress):
                continue
            busy = self.deps.store.list_jobs(scope, [JobStatus.QUEUED, JobStatus.RUNNING], limit=1)
            if not busy:
                return
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"jobs still running after {timeout_s} s; call flush() again to keep waiting")
            time.sleep(0.05)


class BackgroundWorker:
    """One daemon thread that runs jobs as they are queued; wake() nudges it, stop() ends it. ``when_idle`` is
    called when nothing was queued, at most once every ``idle_every_s``: it may queue jobs (the facade hands it the
    turns of sessions gone quiet) and says how many."""

    def __init__(
        self,
        runner: JobRunner,
        *,
        idle_poll_s: float = 1.0,
        when_idle: Callable[[], int] | None = None,
        idle_every_s: float = 60.0,
    ) -> None:
        self._runner = runner
        self._idle_poll_s = idle_poll_s
        self._when_idle = when_idle
        self._idle_every_s = idle_every_s
        self._idle_at = float("-inf")  # the first idle moment runs it
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memstrata-write-worker", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout_s)  # a job cut short keeps its lease and is resumed later

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                handled = self._runner.run_once()
            except Exception:
                log.exception("background job batch failed; it will be retried when its lease expires")
                handled = 0
            if not handled and not self._idle():
                self._wake.wait(self._idle_poll_s)
                self._wake.clear()

    def _idle(self) -> int:
        if self._when_idle is None or time.monotonic() - self._idle_at < self._idle_every_s:
            return 0
        self._idle_at = time.monotonic()
        try:
            return self._when_idle()
        except Exception:
            log.exception("the idle task failed; it runs again in %s s", self._idle_every_s)
            return 0
