"""``memory.lifecycle``: what people and maintenance do to memories after they are written: review pending
facts, archive and restore, forget by description, merge near-duplicates, run maintenance."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Unpack

import numpy as np

from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.facade.sessions import SessionsAPI
from memstrata.indexing import content_hash, index_text, indexed_context
from memstrata.lifecycle.consolidate import clusters, merge_batch
from memstrata.lifecycle.maintain import MaintenanceReport, run_maintenance
from memstrata.lifecycle.status import confirmed_batch, forgotten_batch, status_batch
from memstrata.query import Filters, ListQuery, SearchQuery
from memstrata.read.evidence import says_a_word_of
from memstrata.records.history import history_event
from memstrata.storage.protocol import WriteBatch
from memstrata.types import HistoryAction, MemoryItem, MemoryKind, MemoryStatus, Scope
from memstrata.validation import check_count, clean_id, clean_label, clean_text, parse_model

# Superseded too: a value replaced since is what as_of reads back ("User likes rock climbing", closed by a later fact,
# was still found as of the week before the forget: a user trial).
_FORGETTABLE = (MemoryStatus.ACTIVE, MemoryStatus.PENDING, MemoryStatus.ARCHIVED, MemoryStatus.SUPERSEDED)


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
        hits = self._core.search(query)
        own_meaning = self._own_similarity(query, [hit.memory for hit in hits if indexed_context(hit.memory)])
        # What the memory itself says: a keyword or a meaning of its own words, not of the turns indexed beside it,
        # which deleted "thanks, that's all for now lol" with the climbing said before it (a user trial).
        matched = [
            hit.memory
            for hit in hits
            if hit.breakdown.key_match
            or (hit.breakdown.keyword_rank is not None and says_a_word_of(hit.memory.text, query.text))
            or own_meaning.get(hit.id, hit.breakdown.vector_similarity or 0.0) >= min_similarity
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
            scrubbed = self._scrubbed_neighbours(query, matched, at=self._core.clock(), actor=actor,
                                                 reason="forget: a turn indexed beside it was forgotten")  # fmt: skip
            # one transaction: the forgotten memories and turns, and the neighbours without them
            self._core.store.write(replace(
                scrubbed, forgotten_messages=turns, status_changes=batch.status_changes,
                history=[*batch.history, *scrubbed.history], replacements=[*batch.replacements, *scrubbed.replacements],
            ))  # fmt: skip
            now_held = {item.id: item for item in self._core.store.get(query.scope, [item.id for item in matched])}
            matched = [now_held.get(item.id, item) for item in matched]  # as they are now: deleted
        return ForgetResult(matched=matched, deleted=confirm and bool(matched))

    def _scrubbed_neighbours(
        self, query: SearchQuery, forgotten: list[MemoryItem], *, at: datetime, actor: str, reason: str
    ) -> WriteBatch:
        """The episodes indexed with a forgotten turn beside them (``preceding_turns``), without it: it stayed in
        their keyword entry and vector, and context() showed it as the turn before ("> before: On weekends I love
        rock climbing", a user trial). Their own text is untouched; the history keeps no copy of what went."""
        said = {item.text for item in forgotten if item.kind == MemoryKind.EPISODE.value}
        gone = {item.id for item in forgotten}
        candidates: dict[str, MemoryItem] = {}
        for text in said:  # the neighbours match the forgotten words through their context
            near = query.model_copy(update={"text": text[:1000], "limit": 20, "filters": Filters(status=_FORGETTABLE)})
            candidates |= {hit.id: hit.memory for hit in self._core.search(near) if hit.id not in gone}
        changed: list[tuple[MemoryItem, MemoryItem]] = []
        for item in candidates.values():
            context = indexed_context(item)
            kept = [line for line in (context or "").splitlines() if not _says_one_of(line, said)]
            if context is None or len(kept) == len(context.splitlines()):
                continue
            metadata = {name: value for name, value in item.metadata.items() if name != "preceding_turns"}
            metadata |= {"preceding_turns": "\n".join(kept)} if kept else {}
            changed.append((item, item.model_copy(update={"metadata": metadata, "updated_at": at})))
        if not changed:
            return WriteBatch()
        history = [history_event(new, HistoryAction.UPDATE, at=at, actor=actor, old_text=old.text, reason=reason,
                                 details={"message_ids": list(new.provenance.message_ids),
                                          "context": "a forgotten turn was taken out of it"})
                   for old, new in changed]  # fmt: skip
        vectors = self._core.vector_batch([new for _, new in changed])
        return replace(vectors, replacements=[(new, old.updated_at) for old, new in changed], history=history)

    def _own_similarity(self, query: SearchQuery, items: list[MemoryItem]) -> dict[str, float]:
        """The cosine of the query with each episode's own text, where its vector holds the turns before it too."""
        if not items:
            return {}
        # the query's vector as the search just made it (the query embedder keeps it), the texts' anew
        asked = np.asarray(self._core.query_embedder(query.scope).embed_batch([query.text])[0], np.float32)
        vectors = np.asarray(self._core.embedder.embed_batch([item.text for item in items]), np.float32)
        cosines = vectors @ asked / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(asked) + 1e-9)
        return {item.id: float(cosine) for item, cosine in zip(items, cosines, strict=True)}

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


def _says_one_of(line: str, texts: set[str]) -> bool:
    """Whether a context line ("user: text", cut with "…" when long: ingest.turn_context) is one of ``texts``."""
    said = line.split(": ", 1)[-1]
    return said in texts or (said.endswith("…") and any(text.startswith(said[:-1]) for text in texts))
