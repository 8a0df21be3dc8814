"""``memory.lifecycle``: what people and maintenance do to memories after they are written: review pending
facts, archive and restore, forget by description, merge near-duplicates, run maintenance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Unpack

from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.facade.sessions import SessionsAPI
from memstrata.indexing import content_hash, index_text
from memstrata.lifecycle.consolidate import clusters, merge_batch
from memstrata.lifecycle.maintain import MaintenanceReport, run_maintenance
from memstrata.lifecycle.status import confirmed_batch, forgotten_batch, status_batch
from memstrata.query import Filters, ListQuery, SearchQuery
from memstrata.types import HistoryAction, MemoryItem, MemoryKind, MemoryStatus, Scope
from memstrata.validation import check_count, clean_id, clean_label, clean_text, parse_model

_FORGETTABLE = (MemoryStatus.ACTIVE, MemoryStatus.PENDING, MemoryStatus.ARCHIVED)


@dataclass(frozen=True)
class ForgetResult:
    matched: list[MemoryItem]  # what the query matched (the preview)
    deleted: bool


class LifecycleAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def set_status(
        self,
        items: list[MemoryItem],
        status: MemoryStatus,
        action: HistoryAction,
        *,
        actor: str,
        reason: str | None,
        never_true: bool = False,
    ) -> None:
        """Every status change of the facade goes through here (one transaction with its history)."""
        if items:
            self._core.store.write(status_batch(items, status, action, at=self._core.clock(), actor=actor,
                                                reason=reason, never_true=never_true))  # fmt: skip

    # --- review -----------------------------------------------------------------------------
    def review_queue(self, *, limit: int = 100, **scope: Unpack[ScopeArgs]) -> list[MemoryItem]:
        """Pending memories (low-confidence extractions) waiting for a person or for repetition."""
        query = ListQuery(scope=self._binding.scope(scope), filters=Filters(status=(MemoryStatus.PENDING,)),
                          limit=check_count(limit, "limit", 1, 10_000))  # fmt: skip
        return self._core.store.list_memories(query)

    def confirm(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        """A pending memory made active; what it contradicted when it was extracted (``would_replace``) and is
        still active is superseded by it, in the same write."""
        item = self._in_status(memory_id, scope, MemoryStatus.PENDING)
        wanted = [str(old) for old in item.metadata.get("would_replace") or []]
        replaced = [old for old in self._core.store.get(item.scope, wanted) if old.status == MemoryStatus.ACTIVE]
        by = clean_label(actor, field="actor", max_chars=200) or "api"
        self._core.store.write(confirmed_batch(item, replaced, at=self._core.clock(), actor=by))
        return self._core.store.get(item.scope, [item.id])[0]

    def reject(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self._move(memory_id, scope, MemoryStatus.PENDING, MemoryStatus.DELETED, HistoryAction.DELETE,
                          actor, "rejected by a person", never_true=True)  # fmt: skip

    # --- archive ------------------------------------------------------------------------------
    def archive(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self._move(memory_id, scope, MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED, HistoryAction.ARCHIVE,
                          actor, "archived on request")  # fmt: skip

    def restore(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self._move(memory_id, scope, MemoryStatus.ARCHIVED, MemoryStatus.ACTIVE, HistoryAction.RESTORE,
                          actor, "restored from the archive")  # fmt: skip

    def _move(
        self,
        memory_id: str,
        scope_args: ScopeArgs,
        expected: MemoryStatus,
        status: MemoryStatus,
        action: HistoryAction,
        actor: str,
        reason: str,
        *,
        never_true: bool = False,
    ) -> MemoryItem:
        item = self._in_status(memory_id, scope_args, expected)
        self.set_status([item], status, action, actor=clean_label(actor, field="actor", max_chars=200) or "api",
                        reason=reason, never_true=never_true)  # fmt: skip
        return self._core.store.get(item.scope, [item.id])[0]

    def _in_status(self, memory_id: str, scope_args: ScopeArgs, expected: MemoryStatus) -> MemoryItem:
        item = self.one(memory_id, self._binding.scope(scope_args))
        if item.status != expected:  # the request is fine; the memory's state does not allow it (HTTP 409)
            raise ConflictError(f"memory {item.id} is {item.status.value}, not {expected.value}; nothing changed")
        return item

    def one(self, memory_id: str, scope: Scope) -> MemoryItem:
        found = self._core.store.get(scope, [clean_id(memory_id)])
        if not found:
            raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}; check the id and the scope")
        return found[0]

    # --- maintenance, forgetting, consolidation ----------------------------------------------------
    def maintain(self, *, stop: Callable[[], bool] = lambda: False) -> MaintenanceReport:
        """Expire stale pending facts, archive idle memories, release and summarise idle sessions (all tenants).

        Safe to interrupt (``stop`` is polled between batches) and to run again.
        """
        sessions = SessionsAPI(self._core, self._binding)

        def summarise(released: list[Scope]) -> None:  # a session that went quiet is summarised as an ended one
            for scope in released:
                if scope.session_id is not None:
                    sessions.summarise(scope)

        return run_maintenance(self._core.store, self._core.clock(), self._core.settings.lifecycle, stop, summarise)

    def forget(
        self,
        what: str,
        *,
        confirm: bool = False,
        min_similarity: float = 0.45,
        limit: int = 20,
        actor: str = "api",
        **scope: Unpack[ScopeArgs],
    ) -> ForgetResult:
        """Find the memories about ``what`` (keyword + semantic). Without ``confirm=True`` this is only a
        preview; with it, every match is soft-deleted with the request recorded in history."""
        query = parse_model(
            SearchQuery,
            {"scope": self._binding.scope(scope), "text": clean_text(what, field="what"), "limit": limit,
             "now": self._core.clock(), "lifecycle": False, "understand_time": False,
             "filters": Filters(status=_FORGETTABLE),  # a pending copy confirmed later would bring it back
             "threshold": 0.0},  # forget applies its own rule below, not search's relevance cutoff
            what="forget",
        )  # fmt: skip
        if not 0.0 <= min_similarity <= 1.0:
            raise InvalidInputError(f"min_similarity must be between 0 and 1, got {min_similarity}")
        actor = clean_label(actor, field="actor", max_chars=200) or "api"
        matched = [
            hit.memory
            for hit in self._core.search(query)
            if hit.breakdown.key_match
            or hit.breakdown.keyword_rank is not None
            or (hit.breakdown.vector_similarity or 0.0) >= min_similarity
        ]
        matched = self._with_same_texts(query.scope, matched)
        if confirm and matched:
            # The texts a forgotten memory's edits replaced go with it: kept for time travel, they still held
            # the old value (a PIN changed once stayed readable as of before the change).
            versions = self._core.kept_versions(query.scope, [item.id for item in matched])
            batch = forgotten_batch([*matched, *versions], at=self._core.clock(), actor=actor,
                                    reason=f"forget: {what}")  # fmt: skip
            # The raw turns behind forgotten episodes go too: kept, they still reached agents through session
            # context and messages(). The episode (soft-deleted, with its history) still holds the text verbatim.
            turns = [(item.scope, message_id) for item in matched if item.kind == MemoryKind.EPISODE.value
                     for message_id in item.provenance.message_ids]  # fmt: skip
            self._core.store.write(replace(batch, forgotten_messages=turns))
            now_held = {item.id: item for item in self._core.store.get(query.scope, [item.id for item in matched])}
            matched = [now_held.get(item.id, item) for item in matched]  # as they are now: deleted
        return ForgetResult(matched=matched, deleted=confirm and bool(matched))

    def _with_same_texts(self, scope: Scope, matched: list[MemoryItem]) -> list[MemoryItem]:
        """The matches and every other memory of the scope holding one of their texts: search shows one memory per
        text, so a fact kept word for word from its turn ("我对花生过敏。") stayed, searchable, after its episode was
        forgotten."""
        found = {item.id: item for item in matched}
        for text in dict.fromkeys(item.text for item in matched):
            for twin in self._core.store.find_by_hash(scope, content_hash(text), _FORGETTABLE):
                found.setdefault(twin.id, twin)
        return list(found.values())

    def consolidate(self, *, threshold: float = 0.92, **scope: Unpack[ScopeArgs]) -> int:
        """Merge near-duplicate memories of the same kind in a scope. Returns how many were merged away."""
        if not 0.5 < threshold <= 1.0:
            raise InvalidInputError(f"threshold must be above 0.5 and at most 1, got {threshold}")
        resolved = self._binding.scope(scope)
        filters = Filters(exclude_kind=(MemoryKind.EPISODE.value,))
        store = self._core.store
        items: list[MemoryItem] = []
        while page := store.list_memories(ListQuery(scope=resolved, filters=filters, limit=1000, offset=len(items))):
            items.extend(page)
        if len(items) < 2:
            return 0
        vectors = self._core.embed_texts([index_text(item) for item in items], resolved.tenant_id).vectors
        found = clusters(items, list(vectors), threshold)
        now = self._core.clock()
        for cluster in found:
            store.write(merge_batch(cluster, now))
        return sum(len(cluster.merged) for cluster in found)
