"""``memory.sessions``: working memory of one conversation: its recent turns under a token budget, and
handing its waiting turns to the write path when it ends."""

from __future__ import annotations

from dataclasses import replace
from typing import Unpack

from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import OwnerArgs, ScopeBinding, in_session
from memstrata.facade.writes import write_update
from memstrata.lifecycle.session import within_budget
from memstrata.query import Filters, ListQuery
from memstrata.records.history import history_event
from memstrata.sentences import cut_to_budget
from memstrata.storage.protocol import WriteBatch
from memstrata.types import HistoryAction, Job, JobStatus, MemoryItem, Message, Scope
from memstrata.validation import check_count
from memstrata.write.session_summary import SUMMARY_KIND, model_writer, session_summary

MAX_SUMMARY_TURNS = 400  # the last turns of a very long session are what its summary covers


class SessionsAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def context(self, session_id: str, *, budget_tokens: int = 2000, **owner: Unpack[OwnerArgs]) -> list[Message]:
        """The most recent turns of a session that fit ``budget_tokens``, oldest first."""
        check_count(budget_tokens, "budget_tokens", 1, 10_000_000)
        resolved = self._binding.scope(in_session(session_id, owner))
        # The newest turns only (a turn costs a token at least): the first 100,000 of a longer session were read,
        # and their last ones returned as the session's latest
        newest = [stored.message for stored in
                  self._core.store.messages(resolved, limit=min(budget_tokens, 100_000), latest=True)]  # fmt: skip
        kept = within_budget(newest, budget_tokens)
        if newest and not kept:  # the newest turn alone is over the budget: it, shortened (as context() does)
            cut = cut_to_budget(newest[-1].content, budget_tokens - 4)
            kept = [newest[-1].model_copy(update={"content": cut})] if cut else []
        return kept

    def end(self, session_id: str, *, wait: bool = False, **owner: Unpack[OwnerArgs]) -> list[Job]:
        """Hand the session's turns still waiting for the trigger policy to the write path, and store (or refresh)
        the session's summary memory (``write.session_summary``)."""
        resolved = self._binding.scope(in_session(session_id, owner))
        self._core.store.write(WriteBatch(release_waiting=[resolved]))
        self.summarise(resolved)
        if wait:
            self._core.runner.drain(scope=resolved)
        else:
            self._core.wake_worker()
        jobs = self._core.store.list_jobs(resolved, list(JobStatus), limit=10_000)
        return [job for job in jobs if job.scope == resolved]

    def summarise(self, session: Scope) -> list[MemoryItem]:
        """One ``summary`` memory per session and owner, linked to all its turns: a fact spread over a session has
        one place where its words sit together. A session named without its user or agent is summarised for each
        owner whose turns it holds (one summary of every user's turns was stored where each user could read it)."""
        stored = self._core.store.messages(session, limit=MAX_SUMMARY_TURNS, latest=True)
        if session.user_id is not None or session.agent_id is not None:
            owners = {session: [turn.message for turn in stored]}
        else:
            owners = {}
            for turn in stored:
                owners.setdefault(turn.scope, []).append(turn.message)
        summaries = [self._summarise(owner, turns) for owner, turns in owners.items()]
        return [summary for summary in summaries if summary is not None]

    def _summarise(self, session: Scope, turns: list[Message]) -> MemoryItem | None:
        """The session's summary for ``session`` (an exact scope): stored, or refreshed in place when the session
        went on (history keeps the old text)."""
        core = self._core
        mode = core.settings.write.session_summary
        if mode == "off" or not turns:
            return None
        writer = model_writer(core.chat_model) if mode == "model" and core.chat_model is not None else None
        fresh = session_summary(turns, session, now=core.clock(), write=writer)
        if fresh is None:
            return None
        query = ListQuery(scope=session, filters=Filters(kind=(SUMMARY_KIND,)), limit=10)
        current = [item for item in core.store.list_memories(query) if item.scope == session]
        if not current:
            history = [history_event(fresh, HistoryAction.ADD, at=fresh.created_at, actor="session-summary")]
            core.store.write(replace(core.vector_batch([fresh]), inserts=[fresh], history=history))
            return fresh
        old = current[0]
        if old.text == fresh.text:
            return old
        new = old.model_copy(update={"text": fresh.text, "metadata": fresh.metadata, "provenance": fresh.provenance,
                                     "updated_at": core.clock()})  # fmt: skip
        # A rolling summary: each one replaces the last, whose text history keeps; no closed version per update.
        return write_update(core, old, new, actor="session-summary", reason="the session went on", keep_version=False)
