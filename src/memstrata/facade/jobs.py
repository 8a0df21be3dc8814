"""``memory.jobs``: the write path's durable queue as callers see it: enqueue turns for extraction,
flush (wait), list, retry. Failures are loud: waiting on a job that failed raises JobFailedError."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from memstrata.errors import InvalidInputError, JobFailedError, NotFoundError
from memstrata.facade.core import MemoryCore
from memstrata.facade.long_text import preceding_turns, turn_episodes
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.facade.writes import rejected
from memstrata.storage.protocol import JobUpdate, WriteBatch
from memstrata.types import AddResult, AdminScope, Job, JobStatus, MemoryEvent, Message, Scope
from memstrata.validation import check_count, clean_id
from memstrata.write.enqueue import plan_infer
from memstrata.write.ingest import ParsedInput
from memstrata.write.progress import ProgressHook

UNFINISHED = [JobStatus.WAITING, JobStatus.QUEUED, JobStatus.RUNNING]


class JobsAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def enqueue(
        self, parsed: ParsedInput, scope: Scope, metadata: dict[str, Any], *, actor: str, wait: bool
    ) -> AddResult:
        """Store the turns and their episodes and queue a job, in one transaction; no model runs here."""
        core = self._core
        now = core.clock()
        turns = parsed.messages or [Message(role="user", content=text, timestamp=now) for text in parsed.texts]
        episodes = turn_episodes(turns, scope, metadata, now, max_chars=core.settings.limits.max_text_chars,
                                 previous=preceding_turns(core, scope))  # fmt: skip
        batch, job = plan_infer(core.store, scope, turns, episodes, settings=core.settings.write, now=now, actor=actor)
        core.store.write(batch)
        if wait:
            self._drain(scope, [job.id], timeout_s=None)
        elif job.status == JobStatus.QUEUED:
            core.wake_worker()
        return AddResult(
            results=tuple(MemoryEvent(id=item.id, event="ADD", memory=item.text, kind=item.kind) for item in episodes),
            message_ids=tuple(turn.id for turn in turns),
            job_id=job.id,
            errors=rejected(parsed),
        )

    def flush(
        self, *, timeout_s: float | None = None, progress: ProgressHook | None = None, **scope: Unpack[ScopeArgs]
    ) -> list[Job]:
        """Run every unfinished extraction job of the scope now (waiting ones too) and return the scope's jobs.
        ``progress`` is called at each stage of each job this call runs (extract, judge, write, done).

        Without a scope, every scope's jobs are flushed. Raises :class:`JobFailedError` when a job that was
        unfinished when the call started failed; jobs that had failed before are only returned.
        """
        resolved = self._binding.optional_scope(scope)
        pending = [job.id for job in self._core.store.list_jobs(resolved, UNFINISHED, limit=100_000)]
        self._drain(resolved, pending, timeout_s=timeout_s, progress=progress)
        return self._core.store.list_jobs(resolved, list(JobStatus), limit=100_000)

    def start_worker(self) -> None:
        """Run queued jobs of every scope in this process's background thread from now on, not only once this
        process queues one itself: a service calls it at startup, so jobs that a stopped or killed process left
        queued (or running, once their lease runs out) are picked up. Does nothing with ``write.background`` off."""
        self._core.wake_worker()

    def list(self, *, status: Sequence[str] = (), limit: int = 100, **scope: Unpack[ScopeArgs]) -> list[Job]:
        resolved = self._binding.optional_scope(scope)
        try:
            statuses = [JobStatus(value) for value in status]
        except ValueError:
            raise InvalidInputError(
                f"unknown job status in {list(status)}; use {', '.join(s.value for s in JobStatus)}"
            ) from None
        return self._core.store.list_jobs(resolved, statuses, check_count(limit, "limit", 1, 1_000_000))

    def retry(self, job_id: str) -> Job:
        """Queue a failed job again (its turns are still stored) and wake the worker."""
        job_id = clean_id(job_id, field="job_id")
        failed = [
            job
            for job in self._core.store.list_jobs(None, [JobStatus.FAILED], limit=100_000)
            if job.id == job_id and job.scope.tenant_id == self._binding.tenant_id
        ]
        if not failed:
            raise NotFoundError(f"no failed job {job_id}; `memstrata jobs --status failed` lists them")
        update = JobUpdate(job_id, JobStatus.QUEUED, self._core.clock(), error=None, raw_output=None)
        self._core.store.write(WriteBatch(job_updates=[update]))
        self._core.wake_worker()
        return failed[0].model_copy(update={"status": JobStatus.QUEUED, "error": None, "raw_output": None})

    def _drain(
        self, scope: AdminScope | None, job_ids: Sequence[str], *, timeout_s: float | None,
        progress: ProgressHook | None = None,
    ) -> None:  # fmt: skip
        store = self._core.store
        waiting = store.list_jobs(scope, [JobStatus.WAITING], limit=100_000)
        if waiting:
            store.write(WriteBatch(release_waiting=list({job.scope: None for job in waiting})))
        self._core.runner.drain(scope=scope, timeout_s=timeout_s, progress=progress)
        wanted = set(job_ids)
        failed = [job for job in store.list_jobs(scope, [JobStatus.FAILED], limit=100_000) if job.id in wanted]
        if failed:
            raise JobFailedError(failed)
