"""The write path's queue, as seen from the facade: add(infer=True), flush, jobs, retry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memstrata.errors import (
    InvalidInputError,
    NotFoundError,
)
from memstrata.memory_base import MemoryBase
from memstrata.storage.protocol import JobUpdate, WriteBatch
from memstrata.types import (
    AddResult,
    Job,
    JobStatus,
    MemoryEvent,
    Message,
    Scope,
)
from memstrata.write.enqueue import plan_infer
from memstrata.write.ingest import (
    ParsedInput,
    episode_memories,
)


class JobsMixin(MemoryBase):
    def _add_for_inference(
        self, parsed: ParsedInput, scope: Scope, metadata: dict[str, Any], *, actor: str, wait: bool
    ) -> AddResult:
        turns = parsed.messages or [Message(role="user", content=text) for text in parsed.texts]
        now = self._clock()
        episodes = episode_memories(turns, scope, metadata, now)
        batch, job = plan_infer(self.store, scope, turns, episodes, settings=self.settings.write, now=now, actor=actor)
        self.store.write(batch)
        if wait:
            self.flush(user_id=scope.user_id, agent_id=scope.agent_id, session_id=scope.session_id)
        elif job.status == JobStatus.QUEUED and self.settings.write.background:
            self._wake_worker()
        return AddResult(
            results=tuple(MemoryEvent(id=item.id, event="ADD", memory=item.text, kind=item.kind) for item in episodes),
            message_ids=tuple(turn.id for turn in turns),
            job_id=job.id,
        )

    def flush(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        timeout_s: float | None = None,
    ) -> list[Job]:
        """Run every pending extraction job now (waiting ones too) and return the jobs of the scope.

        Without a scope, every scope's jobs are flushed. Failed jobs are returned, not raised:
        look at ``job.error`` and ``job.raw_output``, and ``retry_job`` them.
        """
        scope = self._optional_scope(user_id, agent_id, session_id)
        waiting = self.store.list_jobs(scope, [JobStatus.WAITING], limit=10_000)
        if waiting:
            self.store.write(WriteBatch(release_waiting=list({job.scope: None for job in waiting})))
        self._runner.drain(scope=scope, timeout_s=timeout_s)
        return self.store.list_jobs(scope, list(JobStatus), limit=10_000)

    def list_jobs(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        status: Sequence[str] = (),
        limit: int = 100,
    ) -> list[Job]:
        scope = self._optional_scope(user_id, agent_id, session_id)
        try:
            statuses = [JobStatus(value) for value in status]
        except ValueError:
            raise InvalidInputError(
                f"unknown job status in {list(status)}; use {', '.join(s.value for s in JobStatus)}"
            ) from None
        return self.store.list_jobs(scope, statuses, limit)

    def retry_job(self, job_id: str) -> Job:
        """Queue a failed job again (its turns are still stored) and wake the worker."""
        failed = [
            job
            for job in self.store.list_jobs(None, [JobStatus.FAILED], limit=100_000)
            if job.id == job_id and job.scope.tenant_id == self._tenant
        ]
        if not failed:
            raise NotFoundError(f"no failed job {job_id}; `memstrata jobs --status failed` lists them")
        update = JobUpdate(job_id, JobStatus.QUEUED, self._clock(), error=None, raw_output=None)
        self.store.write(WriteBatch(job_updates=[update]))
        if self.settings.write.background:
            self._wake_worker()
        return failed[0].model_copy(update={"status": JobStatus.QUEUED})
