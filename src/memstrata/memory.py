"""The Memory facade: the one object every interface (Python, CLI, later REST and MCP) calls.

Call shapes follow mem0 where that is sensible (``add(messages, user_id=...)``,
``search(query, user_id=...)``) so users can switch. Every call is scoped: writes need at least
one of user_id / agent_id / session_id, and reads only ever see memories in their scope.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memstrata.config import Settings, load_settings
from memstrata.errors import (
    InvalidInputError,
    NotFoundError,
    ProviderError,
)
from memstrata.indexing import index_text
from memstrata.memory_admin import AdminMixin
from memstrata.memory_graph import GraphMixin
from memstrata.memory_jobs import JobsMixin
from memstrata.memory_lifecycle import LifecycleMixin
from memstrata.providers.factory import build_embedder
from memstrata.providers.llm_factory import resolve_llm
from memstrata.query import Filters, ListQuery, OrderField, SearchQuery
from memstrata.read.pipeline import search as run_search
from memstrata.storage.factory import open_store
from memstrata.storage.protocol import StatusChange, WriteBatch
from memstrata.types import (
    AddResult,
    HistoryAction,
    HistoryEvent,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    MemoryStatus,
    Provenance,
    SearchHit,
    StoredMessage,
    as_utc,
)
from memstrata.validation import clean_text, parse_model
from memstrata.write.extract import LLMExtractor
from memstrata.write.ingest import (
    AddInput,
    check_key,
    check_kind,
    check_metadata,
    episode_memories,
    history_event,
    new_memory,
    parse_input,
)
from memstrata.write.reconcile import LLMReconciler


class Memory(JobsMixin, AdminMixin, LifecycleMixin, GraphMixin):
    """Layered long-term memory: add, search, update, delete, history; see the mixins for the rest."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str | Path | Settings | None = None) -> Memory:
        """Build from a settings dict, a TOML file path, a Settings object, or the environment."""
        settings = (
            config
            if isinstance(config, Settings)
            else load_settings(dict(config) if isinstance(config, Mapping) else config)
        )
        store = open_store(settings.store)
        llm = resolve_llm(settings.llm, os.environ)
        extractor = LLMExtractor(llm.model, graph=settings.graph.enabled) if llm.model else None
        reconciler = LLMReconciler(llm.model) if llm.model else None
        memory = cls(
            store, build_embedder(settings.embedder), settings=settings, extractor=extractor, reconciler=reconciler
        )
        memory.llm_reason = llm.reason
        return memory

    def add(
        self,
        messages: AddInput,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = False,
        kind: str = MemoryKind.FACT.value,
        key: str | None = None,
        confidence: float = 1.0,
        event_time: datetime | None = None,
        actor: str = "api",
        wait: bool = False,
    ) -> AddResult:
        """Store text as memories, or conversation turns as raw messages plus episode memories.

        Raw turns and memories are committed before any model runs; vectors follow in a second
        transaction. If the embedder fails, nothing the user said is lost: the error says so and
        ``reindex()`` completes the vectors later.

        With ``infer=True`` the input is treated as conversation turns (strings as user turns): the
        turns are stored and a background job extracts and reconciles facts; the call returns at
        once with the job id. ``wait=True`` (or ``flush()``) waits for the result.
        """
        scope = self._scope(user_id, agent_id, session_id)
        parsed = parse_input(messages, max_chars=self._max_chars(), max_batch=self.settings.limits.max_batch)
        if infer:
            return self._add_for_inference(parsed, scope, check_metadata(metadata), actor=actor, wait=wait)
        clean_metadata = check_metadata(metadata)
        kind, key = check_kind(kind), check_key(key)
        if key is not None and len(parsed.texts) != 1:
            raise InvalidInputError("key= applies to exactly one text memory; add keyed facts one at a time")
        if event_time is not None:
            event_time = as_utc(event_time)
        self._identity()  # refuse early if the store holds another model's vectors
        now = self._clock()

        if key is not None:
            existing = self.store.find_by_key(scope, key)
            if existing is not None and existing.scope == scope:
                updated = self.update(
                    existing.id,
                    parsed.texts[0],
                    metadata=clean_metadata or None,
                    user_id=user_id,
                    agent_id=agent_id,
                    session_id=session_id,
                    actor=actor,
                    reason=f"new value for key {key}",
                )
                return AddResult(
                    results=(
                        MemoryEvent(
                            id=updated.id,
                            event="UPDATE",
                            memory=updated.text,
                            previous_memory=existing.text,
                            kind=updated.kind,
                        ),
                    )
                )

        if parsed.messages:
            items = episode_memories(parsed.messages, scope, clean_metadata, now)
        else:
            items = [
                new_memory(
                    scope,
                    text,
                    now=now,
                    kind=kind,
                    metadata=clean_metadata,
                    key=key,
                    confidence=confidence,
                    event_time=event_time,
                    provenance=Provenance(source="api"),
                )
                for text in parsed.texts
            ]
        history = [history_event(item, HistoryAction.ADD, at=now, actor=actor) for item in items]
        records = WriteBatch(messages=[(m, scope) for m in parsed.messages], inserts=items, history=history)
        if parsed.messages:
            self._store_turns_then_vectors(records)
        else:
            # Plain texts are not conversation turns: embed first, then write all or nothing.
            self.store.write(replace(self._vector_batch(items), inserts=items, history=history))
        return AddResult(
            results=tuple(MemoryEvent(id=item.id, event="ADD", memory=item.text, kind=item.kind) for item in items),
            message_ids=tuple(m.id for m in parsed.messages),
        )

    def _store_turns_then_vectors(self, records: WriteBatch) -> None:
        """Raw turns are committed before any model runs; vectors follow in a second write."""
        self.store.write(records)
        items = list(records.inserts)
        try:
            self.store.write(self._vector_batch(items))
        except ProviderError as exc:
            raise ProviderError(
                f"stored {len(records.messages)} raw turns as {len(items)} episodes, but embedding failed "
                f"({exc}); they are keyword-searchable now; run `memstrata reindex` to add their vectors"
            ) from exc

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        actor: str = "api",
        reason: str | None = None,
    ) -> MemoryItem:
        """Change a memory's text and/or metadata (merged). Re-embeds and records history."""
        if text is None and metadata is None:
            raise InvalidInputError("update() needs new text, new metadata, or both")
        old = self.get(memory_id, user_id=user_id, agent_id=agent_id, session_id=session_id, record_access=False)
        if old.status == MemoryStatus.DELETED:
            raise InvalidInputError(f"memory {memory_id} is deleted; add a new memory instead")
        changes: dict[str, Any] = {"updated_at": self._clock()}
        if text is not None:
            changes["text"] = clean_text(text, max_chars=self._max_chars())
        if metadata is not None:
            changes["metadata"] = {**old.metadata, **check_metadata(metadata)}
        new = old.model_copy(update=changes)
        event = history_event(
            new, HistoryAction.UPDATE, at=new.updated_at, actor=actor, old_text=old.text, reason=reason
        )
        reindexed = index_text(new) != index_text(old)
        vectors = self._vector_batch([new]) if reindexed else WriteBatch()
        self.store.write(replace(vectors, replacements=[(new, old.updated_at)], history=[event]))
        return new

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        actor: str = "api",
        reason: str | None = None,
    ) -> MemoryItem:
        """Soft delete: the memory leaves search, its validity closes, history keeps the text."""
        item = self.get(memory_id, user_id=user_id, agent_id=agent_id, session_id=session_id, record_access=False)
        if item.status == MemoryStatus.DELETED:
            return item
        self._set_status([item], MemoryStatus.DELETED, actor=actor, reason=reason)
        return self.get(memory_id, user_id=user_id, agent_id=agent_id, session_id=session_id, record_access=False)

    def _set_status(self, items: list[MemoryItem], status: MemoryStatus, *, actor: str, reason: str | None) -> None:
        now = self._clock()
        self.store.write(
            WriteBatch(
                status_changes=[StatusChange(item.id, item.scope, status, now) for item in items],
                history=[
                    history_event(item, HistoryAction.DELETE, at=now, actor=actor, reason=reason) for item in items
                ],
            )
        )

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        actor: str = "api",
        reason: str | None = None,
    ) -> int:
        """Soft-delete every live memory in the scope, in one transaction. Returns how many."""
        scope = self._scope(user_id, agent_id, session_id)
        live = (MemoryStatus.ACTIVE, MemoryStatus.PENDING, MemoryStatus.ARCHIVED)
        items: list[MemoryItem] = []
        while batch := self.store.list_memories(
            ListQuery(scope=scope, filters=Filters(status=live), limit=10_000, offset=len(items), order_by="created_at")
        ):
            items.extend(batch)
        if items:
            self._set_status(items, MemoryStatus.DELETED, actor=actor, reason=reason or "delete_all")
        return len(items)

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 10,
        filters: Filters | Mapping[str, Any] | None = None,
        threshold: float | None = None,
        record_access: bool = True,
        as_of: datetime | None = None,
        include_archived: bool = False,
        lifecycle: bool = True,
        understand_time: bool = True,
        graph: bool = True,
    ) -> list[SearchHit]:
        """Hybrid search: exact key lookup, then keyword + dense (+ time range) candidates fused by RRF,
        then lifecycle-aware ranking (decay, recency, reinforcement, confidence).

        ``as_of`` answers from the memory as it stood then (superseded and deleted versions included if
        they were valid at that moment). ``include_archived`` also searches cold storage. ``graph=False``
        leaves out the graph list (memories reached through entities the query names).
        """
        scope = self._scope(user_id, agent_id, session_id)
        text = clean_text(query, field="query", max_chars=self._max_chars())
        parsed_filters = parse_model(Filters, filters or {}, what="filters")
        statuses = set(parsed_filters.status)
        if include_archived:
            statuses.add(MemoryStatus.ARCHIVED)
        if as_of is not None:  # every version that may have been valid then; validity decides
            statuses |= {MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED, MemoryStatus.DELETED, MemoryStatus.ARCHIVED}
        parsed_filters = parsed_filters.model_copy(update={"status": tuple(sorted(statuses)), "valid_at": as_of})
        search_query = parse_model(
            SearchQuery,
            {
                "scope": scope,
                "text": text,
                "limit": limit,
                "threshold": threshold,
                "record_access": record_access,
                "filters": parsed_filters,
                "now": as_of or self._clock(),
                "lifecycle": lifecycle,
                "understand_time": understand_time,
                "graph": graph,
            },
            what="search",
        )
        self._identity()
        hits = run_search(self.store, self.embedder, search_query, self._read_settings)
        if record_access and hits:
            self.store.record_access(scope, [hit.id for hit in hits], self._clock())
        return hits

    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        record_access: bool = True,
    ) -> MemoryItem:
        scope = self._scope(user_id, agent_id, session_id)
        found = self.store.get(scope, [memory_id])
        if not found:
            raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}; check the id and the scope")
        if record_access:
            self.store.record_access(scope, [memory_id], self._clock())
        return found[0]

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
        order_by: OrderField = "created_at",
        descending: bool = True,
    ) -> list[MemoryItem]:
        scope = self._scope(user_id, agent_id, session_id)
        query = parse_model(
            ListQuery,
            {
                "scope": scope,
                "filters": parse_model(Filters, filters or {}, what="filters"),
                "limit": limit,
                "offset": offset,
                "order_by": order_by,
                "descending": descending,
            },
            what="list query",
        )
        return self.store.list_memories(query)

    def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[HistoryEvent]:
        """Every change to a memory, oldest first, including the versions it superseded."""
        scope = self._scope(user_id, agent_id, session_id)
        events = self.store.history(scope, memory_id)
        if not events:
            raise NotFoundError(f"no history for memory {memory_id} in scope {scope.label()}")
        seen = {memory_id}
        superseded = events[0].details.get("supersedes")
        while isinstance(superseded, str) and superseded not in seen:  # walk back through older versions
            seen.add(superseded)
            older = self.store.history(scope, superseded)
            events = older + events
            superseded = older[0].details.get("supersedes") if older else None
        return list({event.id: event for event in events}.values())

    def messages(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        limit: int = 1000,
    ) -> list[StoredMessage]:
        """The raw turns stored for a scope, oldest first: the provenance behind every memory."""
        return self.store.messages(self._scope(user_id, agent_id, session_id), limit=limit)
