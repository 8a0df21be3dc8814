"""``memory.sessions``: working memory of one conversation: its recent turns under a token budget, and
handing its waiting turns to the write path when it ends."""

from __future__ import annotations

from typing import Unpack

from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import OwnerArgs, ScopeBinding, in_session
from memstrata.lifecycle.session import within_budget
from memstrata.storage.protocol import WriteBatch
from memstrata.types import Job, JobStatus, Message
from memstrata.validation import check_count


class SessionsAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def context(self, session_id: str, *, budget_tokens: int = 2000, **owner: Unpack[OwnerArgs]) -> list[Message]:
        """The most recent turns of a session that fit ``budget_tokens``, oldest first."""
        check_count(budget_tokens, "budget_tokens", 1, 10_000_000)
        resolved = self._binding.scope(in_session(session_id, owner))
        turns = [stored.message for stored in self._core.store.messages(resolved, limit=100_000)]
        return within_budget(turns, budget_tokens)

    def end(self, session_id: str, *, wait: bool = False, **owner: Unpack[OwnerArgs]) -> list[Job]:
        """Hand the session's turns still waiting for the trigger policy to the write path."""
        resolved = self._binding.scope(in_session(session_id, owner))
        self._core.store.write(WriteBatch(release_waiting=[resolved]))
        if wait:
            self._core.runner.drain(scope=resolved)
        else:
            self._core.wake_worker()
        jobs = self._core.store.list_jobs(resolved, list(JobStatus), limit=10_000)
        return [job for job in jobs if job.scope == resolved]
