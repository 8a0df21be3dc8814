"""Lifecycle operations of the facade: review pending facts, archive and restore, maintenance,
forgetting and erasure, working memory of a session, consolidation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memstrata.errors import ConfirmationRequiredError, InvalidInputError, NotFoundError, StoreError
from memstrata.indexing import index_text
from memstrata.lifecycle.consolidate import clusters, merge_batch
from memstrata.lifecycle.maintain import MaintenanceReport, move, run_maintenance
from memstrata.lifecycle.session import within_budget
from memstrata.memory_base import MemoryBase
from memstrata.providers.cache import embed_with_cache
from memstrata.query import Filters, ListQuery, SearchQuery
from memstrata.read.pipeline import search as run_search
from memstrata.storage.protocol import StatusChange, WriteBatch
from memstrata.types import HistoryAction, Job, JobStatus, MemoryItem, MemoryKind, MemoryStatus, Message, Scope
from memstrata.validation import clean_text
from memstrata.write.ingest import history_event


@dataclass(frozen=True)
class ForgetResult:
    matched: list[MemoryItem]  # what the query matched (the preview)
    deleted: bool


@dataclass(frozen=True)
class ErasureReport:
    deleted: dict[str, int]  # rows removed per table
    remaining: dict[str, int]  # rows per table still about the user afterwards: all zero


class LifecycleMixin(MemoryBase):
    def _one(self, memory_id: str, scope: Scope, *statuses: MemoryStatus) -> MemoryItem:
        found = self.store.get(scope, [memory_id])
        if not found:
            raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}; check the id and the scope")
        if statuses and found[0].status not in statuses:
            wanted = " or ".join(s.value for s in statuses)
            raise InvalidInputError(f"memory {memory_id} is {found[0].status.value}, not {wanted}")
        return found[0]

    def _change(
        self, item: MemoryItem, status: MemoryStatus, action: HistoryAction, reason: str, *, close: bool = False
    ) -> MemoryItem:
        now = self._clock()
        self.store.write(
            WriteBatch(
                status_changes=[StatusChange(item.id, item.scope, status, now, close_validity=close)],
                history=[history_event(item, action, at=now, actor="api", reason=reason)],
            )
        )
        return self.store.get(item.scope, [item.id])[0]

    # --- pending review ------------------------------------------------------------------
    def review_queue(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 100,
    ) -> list[MemoryItem]:
        """Pending memories (low-confidence extractions) waiting for a person or for repetition."""
        scope = self._scope(user_id, agent_id, session_id)
        return self.store.list_memories(ListQuery(scope=scope, filters=Filters(status=(MemoryStatus.PENDING,)),
                                                  limit=limit))  # fmt: skip

    def confirm(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                session_id: str | None = None) -> MemoryItem:  # fmt: skip
        item = self._one(memory_id, self._scope(user_id, agent_id, session_id), MemoryStatus.PENDING)
        return self._change(item, MemoryStatus.ACTIVE, HistoryAction.CONFIRM, "confirmed by a person")

    def reject(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
               session_id: str | None = None) -> MemoryItem:  # fmt: skip
        item = self._one(memory_id, self._scope(user_id, agent_id, session_id), MemoryStatus.PENDING)
        return self._change(item, MemoryStatus.DELETED, HistoryAction.DELETE, "rejected by a person", close=True)

    # --- archive ---------------------------------------------------------------------------
    def archive(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                session_id: str | None = None) -> MemoryItem:  # fmt: skip
        item = self._one(memory_id, self._scope(user_id, agent_id, session_id), MemoryStatus.ACTIVE)
        return self._change(item, MemoryStatus.ARCHIVED, HistoryAction.ARCHIVE, "archived on request")

    def restore(self, memory_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                session_id: str | None = None) -> MemoryItem:  # fmt: skip
        item = self._one(memory_id, self._scope(user_id, agent_id, session_id), MemoryStatus.ARCHIVED)
        return self._change(item, MemoryStatus.ACTIVE, HistoryAction.RESTORE, "restored from the archive")

    def maintain(self, *, stop: Callable[[], bool] = lambda: False) -> MaintenanceReport:
        """Expire stale pending facts, archive idle memories, release idle sessions (all tenants).

        Safe to interrupt (``stop`` is polled between batches) and to run again.
        """
        return run_maintenance(self.store, self._clock(), self.settings.lifecycle, stop)

    # --- forgetting ------------------------------------------------------------------------
    def forget(
        self,
        what: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        confirm: bool = False,
        min_similarity: float = 0.45,
        limit: int = 20,
    ) -> ForgetResult:
        """Find the memories about ``what`` (keyword + semantic). Without ``confirm=True`` this is only a
        preview; with it, every match is soft-deleted with the request recorded in history."""
        scope = self._scope(user_id, agent_id, session_id)
        query = SearchQuery(scope=scope, text=clean_text(what, field="what"), limit=limit, now=self._clock(),
                            lifecycle=False, understand_time=False, record_access=False)  # fmt: skip
        hits = run_search(self.store, self.embedder, query, self._read_settings)
        matched = [
            hit.memory
            for hit in hits
            if hit.breakdown.keyword_rank is not None or (hit.breakdown.vector_similarity or 0.0) >= min_similarity
        ]
        if confirm and matched:
            move(self.store, matched, MemoryStatus.DELETED, HistoryAction.DELETE, self._clock(), f"forget: {what}")
        return ForgetResult(matched=matched, deleted=confirm and bool(matched))

    def erase_user(self, user_id: str, *, confirm: bool = False) -> ErasureReport:
        """Remove everything about a user (memories, raw turns, history, vectors, jobs, cached embeddings)
        and prove that nothing remains. Irreversible: needs ``confirm=True``."""
        if not confirm:
            raise ConfirmationRequiredError(
                f"erase_user removes every memory, raw turn and history row of {user_id!r} for good; "
                "call erase_user(user_id, confirm=True)"
            )
        scope = self._scope(user_id, None, None)
        deleted = self.store.erase_scope(scope)
        remaining = self.store.count_scope_rows(scope)
        if any(remaining.values()):
            raise StoreError(f"erasure of {user_id!r} left rows behind: {remaining}; run erase_user again")
        return ErasureReport(deleted=deleted, remaining=remaining)

    # --- working memory --------------------------------------------------------------------
    def session_context(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None, budget_tokens: int = 2000
    ) -> list[Message]:
        """The most recent turns of a session that fit ``budget_tokens``, oldest first."""
        scope = self._scope(user_id, agent_id, session_id)
        turns = [stored.message for stored in self.store.messages(scope, limit=100_000)]
        return within_budget(turns, budget_tokens)

    def end_session(
        self, session_id: str, *, user_id: str | None = None, agent_id: str | None = None, wait: bool = False
    ) -> list[Job]:
        """Hand the session's turns still waiting for the trigger policy to the write path."""
        scope = self._scope(user_id, agent_id, session_id)
        self.store.write(WriteBatch(release_waiting=[scope]))
        if wait:
            self._runner.drain(scope=scope)
        elif self.settings.write.background:
            self._wake_worker()
        return [job for job in self.store.list_jobs(scope, list(JobStatus), limit=10_000) if job.scope == scope]

    # --- consolidation ---------------------------------------------------------------------
    def consolidate(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        threshold: float = 0.92,
    ) -> int:
        """Merge near-duplicate memories of the same kind in a scope. Returns how many were merged away."""
        scope = self._scope(user_id, agent_id, session_id)
        filters = Filters(exclude_kind=(MemoryKind.EPISODE.value,))
        items: list[MemoryItem] = []
        while page := self.store.list_memories(ListQuery(scope=scope, filters=filters, limit=1000, offset=len(items))):
            items.extend(page)
        if len(items) < 2:
            return 0
        vectors = embed_with_cache(self.embedder, self.store, [index_text(item) for item in items]).vectors
        found = clusters(items, list(vectors), threshold)
        now = self._clock()
        for cluster in found:
            self.store.write(merge_batch(cluster, now))
        return sum(len(cluster.merged) for cluster in found)
