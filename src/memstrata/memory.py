"""The Memory facade: the one object every interface (Python, CLI, later REST and MCP) calls.

Call shapes follow mem0 where that is sensible (``add(messages, user_id=...)``,
``search(query, user_id=...)``) so users can switch. Every call is scoped: writes need at least
one of user_id / agent_id / session_id, and reads only ever see memories in their scope.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memstrata.config import Settings, load_settings
from memstrata.errors import (
    ConfirmationRequiredError,
    EmbeddingMismatchError,
    InvalidInputError,
    NotFoundError,
    ProviderError,
)
from memstrata.indexing import index_text
from memstrata.providers.cache import embed_with_cache
from memstrata.providers.factory import build_embedder
from memstrata.providers.llm_factory import resolve_llm
from memstrata.providers.protocol import Embedder, embedding_identity
from memstrata.providers.rules_extractor import RulesExtractor
from memstrata.query import Filters, ListQuery, OrderField, SearchQuery
from memstrata.read.pipeline import ReadSettings
from memstrata.read.pipeline import search as run_search
from memstrata.storage.protocol import JobUpdate, StatusChange, Store, StoreStats, WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.transfer import export_jsonl, import_jsonl
from memstrata.types import (
    AddResult,
    HistoryAction,
    HistoryEvent,
    Job,
    JobStatus,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    MemoryStatus,
    Message,
    Provenance,
    Scope,
    SearchHit,
    StoredMessage,
    as_utc,
    utcnow,
)
from memstrata.validation import clean_text, guarded, parse_model
from memstrata.write.enqueue import plan_infer
from memstrata.write.extract import Extractor, LLMExtractor
from memstrata.write.ingest import (
    AddInput,
    ParsedInput,
    check_key,
    check_kind,
    check_metadata,
    episode_memories,
    history_event,
    new_memory,
    parse_input,
)
from memstrata.write.pipeline import WriteDeps
from memstrata.write.reconcile import LLMReconciler, Reconciler, RulesReconciler
from memstrata.write.worker import BackgroundWorker, JobRunner

Clock = Callable[[], datetime]


class Memory:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        settings: Settings | None = None,
        clock: Clock = utcnow,
        extractor: Extractor | None = None,
        reconciler: Reconciler | None = None,
    ) -> None:
        """Without an extractor, infer=True uses the bilingual rules (no model)."""
        self.store = store
        self.embedder = embedder
        self.settings = settings or Settings()
        self._clock = clock
        self._read_settings = ReadSettings(candidates=self.settings.search.candidates, rrf_k=self.settings.search.rrf_k)
        self.extractor: Extractor = extractor or RulesExtractor()
        self.reconciler: Reconciler = reconciler or RulesReconciler()
        deps = WriteDeps(
            store=store,
            embed_texts=lambda texts: embed_with_cache(self.embedder, self.store, texts),
            embedding_id=embedding_identity(embedder),
            extractor=self.extractor,
            reconciler=self.reconciler,
            clock=clock,
        )
        write = self.settings.write
        self._runner = JobRunner(deps, lease_s=write.lease_s, batch_jobs=write.batch_jobs)
        self._worker: BackgroundWorker | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | str | Path | Settings | None = None) -> Memory:
        """Build from a settings dict, a TOML file path, a Settings object, or the environment."""
        settings = (
            config
            if isinstance(config, Settings)
            else load_settings(dict(config) if isinstance(config, Mapping) else config)
        )
        store = SQLiteStore(settings.store.path, busy_timeout_s=settings.store.busy_timeout_s)
        llm = resolve_llm(settings.llm, os.environ)
        extractor = LLMExtractor(llm.model) if llm.model else None
        reconciler = LLMReconciler(llm.model) if llm.model else None
        memory = cls(
            store, build_embedder(settings.embedder), settings=settings, extractor=extractor, reconciler=reconciler
        )
        memory.llm_reason = llm.reason
        return memory

    llm_reason = "rules extractor (no model passed to Memory)"
    _tenant: str | None = None

    def for_tenant(self, tenant_id: str | None) -> Memory:
        """A view of this Memory bound to one tenant: every call it makes is scoped to that tenant.

        Views share the store, embedder and worker; close the Memory they came from, not the view.
        """
        view = copy.copy(self)
        view._tenant = guarded(lambda: Scope(user_id="-", tenant_id=tenant_id), what="tenant").tenant_id
        return view

    def close(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- helpers ------------------------------------------------------------------------
    def _scope(self, user_id: str | None, agent_id: str | None, session_id: str | None) -> Scope:
        return guarded(
            lambda: Scope(user_id=user_id, agent_id=agent_id, session_id=session_id, tenant_id=self._tenant),
            what="scope",
        )

    def _optional_scope(self, user_id: str | None, agent_id: str | None, session_id: str | None) -> Scope | None:
        """Admin calls (flush, list_jobs, stats) may omit the scope, but never inside a tenant view."""
        if user_id or agent_id or session_id or self._tenant is not None:
            return self._scope(user_id, agent_id, session_id)
        return None

    def _max_chars(self) -> int:
        return self.settings.limits.max_text_chars

    def _identity(self) -> str:
        """The configured embedding identity, refused early if the store holds another one."""
        identity = embedding_identity(self.embedder)
        stored = self.store.embedding_id()
        if stored is not None and stored != identity:
            raise EmbeddingMismatchError(stored=stored, configured=identity)
        return identity

    def _embed(self, items: list[MemoryItem]) -> list[tuple[str, Any]]:
        return list(self._vector_batch(items).vectors)

    def _vector_batch(self, items: list[MemoryItem]) -> WriteBatch:
        """Embed (through the cache) and package vectors plus new cache entries as one write."""
        embedded = embed_with_cache(self.embedder, self.store, [index_text(item) for item in items])
        return WriteBatch(
            vectors=[(item.id, vector) for item, vector in zip(items, embedded.vectors, strict=True)],
            embedding_id=embedding_identity(self.embedder),
            cache_entries=embedded.new_cache_entries,
        )

    # --- write --------------------------------------------------------------------------
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

    def _wake_worker(self) -> None:
        if self._worker is None:
            self._worker = BackgroundWorker(self._runner)
        self._worker.wake()

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

    def purge(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        """Hard delete one memory: its row, vector, keyword entry and history are removed."""
        scope = self._scope(user_id, agent_id, session_id)
        if self.store.purge(scope, [memory_id]) == 0:
            raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}")

    def reset(self, *, confirm: bool = False) -> None:
        """Remove everything in the store, every scope. Needs ``confirm=True``."""
        if not confirm:
            raise ConfirmationRequiredError(
                "reset() deletes every memory, message and history row of every user; call reset(confirm=True)"
            )
        self.store.reset()

    # --- read ---------------------------------------------------------------------------
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
    ) -> list[SearchHit]:
        """Hybrid search: exact key lookup, then keyword + dense candidates fused by RRF."""
        scope = self._scope(user_id, agent_id, session_id)
        text = clean_text(query, field="query", max_chars=self._max_chars())
        search_query = parse_model(
            SearchQuery,
            {
                "scope": scope,
                "text": text,
                "limit": limit,
                "threshold": threshold,
                "record_access": record_access,
                "filters": parse_model(Filters, filters or {}, what="filters"),
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

    def stats(
        self, *, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None
    ) -> StoreStats:
        return self.store.stats(self._optional_scope(user_id, agent_id, session_id))

    # --- maintenance --------------------------------------------------------------------
    def reindex(self, *, batch_size: int = 256) -> Iterator[int]:
        """Embed every memory lacking a vector of the configured model; yields progress counts.

        Switching models first points the store at the new identity, so new writes use it and
        an interrupted reindex resumes where it stopped.
        """
        identity = embedding_identity(self.embedder)
        if self.store.embedding_id() != identity:
            self.store.set_embedding_id(identity)
        for batch in self.store.memories_needing_vectors(identity, batch_size):
            self.store.write(self._vector_batch(batch))
            yield len(batch)

    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory, vector, history event and raw turn to a JSONL file. Returns lines."""
        return export_jsonl(self.store, Path(path))

    def import_jsonl(self, path: str | Path) -> int:
        """Load an export into this store in one transaction. Returns the number of memories."""
        return import_jsonl(self.store, Path(path), self._embed, self._identity())
