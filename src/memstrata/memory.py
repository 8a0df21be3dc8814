"""The Memory facade: the one object every interface (Python, CLI, REST, MCP) calls.

Call shapes follow mem0 where that is sensible (``add(messages, user_id=...)``,
``search(query, user_id=...)``) so users can switch. Every call is scoped: writes need at least
one of user_id / agent_id / session_id, and reads only ever see memories in their scope.

State lives in one :class:`~memstrata.facade.core.MemoryCore`; a Memory is a small immutable view
of it (the whole store, one tenant, or one scope). Related operations are grouped in sub-APIs built
the same way: ``memory.jobs``, ``memory.lifecycle``, ``memory.sessions``, ``memory.admin``,
``memory.graph``. The most used of them are also methods here, delegating to the same code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, Unpack

from memstrata.config import Settings, load_settings
from memstrata.deep.context_model import Audience, MemoryContext, Mode
from memstrata.deep.search import DeepResult
from memstrata.errors import ConflictError, InvalidInputError, MemstrataError, NotFoundError, TurnStoredMeanwhileError
from memstrata.export import ImportReport
from memstrata.facade import ids
from memstrata.facade.admin import AdminAPI, ErasureReport
from memstrata.facade.context import build_context, checked_audience, checked_mode, deep_result, search_in_mode
from memstrata.facade.core import Clock, MemoryCore
from memstrata.facade.ids import IdKind
from memstrata.facade.jobs import JobsAPI
from memstrata.facade.lifecycle import ForgetResult, LifecycleAPI
from memstrata.facade.scoping import OwnerArgs, ScopeArgs, ScopeBinding
from memstrata.facade.sessions import SessionsAPI
from memstrata.facade.tasks import TasksAPI
from memstrata.facade.texts import add_texts
from memstrata.facade.writes import (
    TextOptions,
    add_turns,
    refuse_ignored_options,
    rejected,
    store_turn_ids,
    updated_version,
    write_update,
)
from memstrata.graph.view import GraphView
from memstrata.lifecycle.maintain import MaintenanceReport
from memstrata.providers.factory import build_embedder
from memstrata.providers.llm import ChatModel
from memstrata.providers.llm_factory import resolve_llm
from memstrata.providers.protocol import Embedder
from memstrata.query import Filters, ListQuery, OrderField, SearchQuery
from memstrata.storage.factory import open_store
from memstrata.storage.protocol import Store, StoreStats
from memstrata.timezones import other_clocks
from memstrata.types import (
    AddResult,
    HistoryAction,
    HistoryEvent,
    Job,
    MemoryItem,
    MemoryStatus,
    Message,
    Scope,
    SearchHit,
    StoredMessage,
    utcnow,
)
from memstrata.validation import (
    check_count,
    checked_filters,
    clean_id,
    clean_label,
    clean_text,
    clean_time,
    guarded,
    parse_model,
)
from memstrata.write.extract import Extractor, LLMExtractor
from memstrata.write.ingest import AddInput, OnError, ParsedInput, check_metadata, parse_input
from memstrata.write.progress import ProgressHook
from memstrata.write.reconcile import LLMReconciler, Reconciler

if TYPE_CHECKING:
    from memstrata.facade.knowledge import KnowledgeAPI
    from memstrata.knowledge.pipeline import IngestReport
    from memstrata.vault import Vault

__all__ = ["ErasureReport", "ForgetResult", "Memory"]


# The statuses a version may have now and still have held at an earlier time (as_of / valid_at, known_at).
_HELD_AT_SOME_TIME = frozenset({MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED, MemoryStatus.DELETED,
                                MemoryStatus.ARCHIVED})  # fmt: skip


class Memory:
    """Layered long-term memory: add, search, update, delete, history; sub-APIs for the rest."""

    _core: MemoryCore
    _binding: ScopeBinding
    _owner: bool

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        settings: Settings | None = None,
        clock: Clock = utcnow,
        extractor: Extractor | None = None,
        reconciler: Reconciler | None = None,
        llm_reason: str = "rules extractor (no model passed to Memory)",
        chat_model: ChatModel | None = None,
    ) -> None:
        """Without an extractor, infer=True uses the bilingual rules (no model). ``chat_model`` is the model for
        everything else that may use one (model-written session summaries, deep search)."""
        self._core = MemoryCore(store, embedder, settings=settings or Settings(), clock=clock, extractor=extractor,
                                reconciler=reconciler, llm_reason=llm_reason, chat_model=chat_model)  # fmt: skip
        self._binding = ScopeBinding()
        self._owner = True

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
        extractor = (
            LLMExtractor(llm.model, graph=settings.graph.enabled, n_ctx=settings.llm.n_ctx) if llm.model else None
        )
        reconciler = LLMReconciler(llm.model) if llm.model else None
        return cls(store, build_embedder(settings.embedder), settings=settings, extractor=extractor,
                   reconciler=reconciler, llm_reason=llm.reason, chat_model=llm.model)  # fmt: skip

    # --- views ----------------------------------------------------------------------------------
    def _view(self, binding: ScopeBinding) -> Self:
        view = object.__new__(type(self))
        view._core, view._binding, view._owner = self._core, binding, False
        return view

    def for_tenant(self, tenant_id: str | None) -> Self:
        """A view bound to one tenant: every call it makes is scoped to that tenant. Close the Memory it came
        from, not the view."""
        tenant = guarded(lambda: ScopeBinding(tenant_id=tenant_id).scope({"user_id": "-"}), what="tenant")
        return self._view(ScopeBinding(tenant_id=tenant.tenant_id))

    def scoped(self, **scope: Unpack[ScopeArgs]) -> Self:
        """A view bound to a scope: calls may omit those ids and can never act for other ones."""
        return self._view(self._binding.narrowed(scope))

    @property
    def store(self) -> Store:
        return self._core.store

    @property
    def embedder(self) -> Embedder:
        return self._core.embedder

    @property
    def settings(self) -> Settings:
        return self._core.settings

    @property
    def extractor(self) -> Extractor:
        return self._core.extractor

    @property
    def reconciler(self) -> Reconciler:
        return self._core.reconciler

    @property
    def llm_reason(self) -> str:
        """Which model extracts facts with infer=True, and why it was chosen."""
        return self._core.llm_reason

    @property
    def tenant_id(self) -> str | None:
        return self._binding.tenant_id

    def resolve_scope(self, **scope: Unpack[ScopeArgs]) -> Scope:
        """The validated scope a call with these ids acts in (this view's tenant and bound ids included)."""
        return self._binding.scope(scope)

    def now(self) -> datetime:
        """The facade's clock (injectable for tests): what "now" means to lifecycle and relative time."""
        return self._core.clock()

    # --- sub-APIs ---------------------------------------------------------------------------------
    @property
    def jobs(self) -> JobsAPI:
        """The write path's queue: flush, list, retry."""
        return JobsAPI(self._core, self._binding)

    @property
    def lifecycle(self) -> LifecycleAPI:
        """Review, archive and restore, forget, consolidate, maintenance."""
        return LifecycleAPI(self._core, self._binding)

    @property
    def sessions(self) -> SessionsAPI:
        """Working memory of a conversation."""
        return SessionsAPI(self._core, self._binding)

    @property
    def admin(self) -> AdminAPI:
        """Stats, purge, reset, reindex, export/import, erasure."""
        return AdminAPI(self._core, self._binding)

    @property
    def tasks(self) -> TasksAPI:
        """Process memory: record tasks and their step trees, recall what worked, check plans for dead ends."""
        return TasksAPI(self._core, self._binding)

    @property
    def vault(self) -> Vault:
        """The Markdown vault configured in ``[vault]`` (notes a person can read and edit) and its rules layer."""
        # on first use: the vault's Markdown and YAML parsers cost every process ~10 MB
        from memstrata.vault import Vault

        return Vault(self, self._core.settings.vault)

    @property
    def graph(self) -> GraphView:
        """Entities and relations of a scope: neighbors, path, subgraph, relation history, export, merge."""
        binding = self._binding

        def scope_for(user_id: str | None, agent_id: str | None, session_id: str | None) -> Any:
            return binding.scope({"user_id": user_id, "agent_id": agent_id, "session_id": session_id})

        return GraphView(self._core.store, scope_for, self._core.clock)

    # --- write --------------------------------------------------------------------------------------
    def add(
        self,
        messages: AddInput,
        *,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = False,
        wait: bool = False,
        kind: str | None = None,
        key: str | None = None,
        confidence: float | None = None,
        event_time: datetime | str | None = None,
        on_error: OnError = "raise",
        actor: str = "api",
        **scope: Unpack[ScopeArgs],
    ) -> AddResult:
        """Store text as memories, or conversation turns as raw messages plus episode memories.

        - Text (a string, or a list of strings and ``{"text", "metadata", "kind", "key", "confidence",
          "event_time"}`` dicts whose options override the call's) becomes memories; ``kind``, ``key`` (a
          namespaced ``project:category:entity``; a second add with the same key updates it), ``confidence``
          and ``event_time`` describe them. The same text added again to a scope is not stored twice: the
          result says NONE (or UPDATE when it brought new metadata) and the memory is reinforced.
        - Turns (message dicts with role and content) are stored verbatim, then as episode memories.
        - A text or turn over ``limits.max_text_chars`` is kept, in consecutive parts that each fit the index.
        - ``infer=True`` stores the turns (strings count as user turns) and queues a background job that
          extracts and reconciles facts; ``wait=True`` (or ``flush()``) waits for it and raises
          :class:`~memstrata.errors.JobFailedError` if it failed.
        - ``on_error="raise"`` (default) refuses the whole call when one item is invalid; ``"skip"`` stores
          the valid items and lists the others by position in ``result.errors``.

        Options that would be ignored (``kind`` with ``infer=True``, ``key`` with turns...) are refused.
        Raw turns are committed before any model runs; if embedding fails, nothing the user said is lost:
        the error says so and ``reindex()`` completes the vectors later. Each result event carries the
        ``index`` of the input item it came from.
        """
        resolved = self._binding.scope(scope)
        limits = self._core.settings.limits
        parsed = parse_input(messages, max_chars=limits.max_whole_chars, max_batch=limits.max_batch,
                             on_error=on_error, now=self._core.clock())  # fmt: skip
        given = {"kind": kind, "key": key, "confidence": confidence, "event_time": event_time}
        refuse_ignored_options(parsed, infer=infer, given=given)
        clean_metadata = check_metadata(metadata)
        actor = clean_label(actor, field="actor", max_chars=200) or "api"
        if parsed.messages:
            added = self._add_turns(parsed, resolved, clean_metadata, actor, infer=infer, wait=wait)
            users_time = self._core.settings.time
            notes = other_clocks(parsed.offsets, users_time.zone(), users_time.timezone)
            return added.model_copy(update={"notes": notes}) if notes else added
        if infer:
            return self.jobs.enqueue(parsed, resolved, clean_metadata, actor=actor, wait=wait)
        if wait:
            raise InvalidInputError("wait=True only applies with infer=True (plain adds are written before returning)")
        self._core.identity()  # refuse early if the store holds another model's vectors
        options = TextOptions.checked(kind, key, confidence, event_time)
        if options.key is not None and len(parsed.items) != 1:
            raise InvalidInputError(
                "key= applies to exactly one text memory; give each item its own key ({'text': ..., 'key': ...})"
            )
        return add_texts(self._core, parsed, resolved, clean_metadata, options, actor, on_error)

    def _add_turns(
        self, parsed: ParsedInput, scope: Scope, metadata: dict[str, Any], actor: str, *, infer: bool, wait: bool
    ) -> AddResult:
        """Turns, each stored once. The same turn sent twice at once was a 409 for the writer that lost the race (the
        other stored it after this one looked); looked for again, it is found, and a resend is a no-op."""
        for attempt in (1, 2):
            stored, every_turn = store_turn_ids(self._core, parsed, scope)
            if not stored.messages:  # all of them were stored before: nothing to do, and nothing to extract again
                return AddResult(results=(), message_ids=every_turn, errors=rejected(stored))
            try:
                if infer:
                    return self.jobs.enqueue(stored, scope, metadata, actor=actor, wait=wait)
                if wait:
                    raise InvalidInputError(
                        "wait=True only applies with infer=True (plain adds are written before returning)"
                    )
                self._core.identity()  # refuse early if the store holds another model's vectors
                return add_turns(self._core, stored, scope, metadata, actor)
            except TurnStoredMeanwhileError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
        actor: str = "api",
        reason: str | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> MemoryItem:
        """Change a memory's text and/or metadata (merged). Re-embeds and records history. An earlier value
        (superseded) is history: its text is refused (ConflictError), its metadata may change."""
        if text is None and metadata is None:
            raise InvalidInputError("update() needs new text, new metadata, or both")
        old = self.get(memory_id, **scope)
        if old.status == MemoryStatus.DELETED:
            raise ConflictError(f"memory {old.id} is deleted; add a new memory instead")
        if old.status == MemoryStatus.SUPERSEDED and text is not None and text != old.text:
            # an earlier value is history: a new text would reopen it beside the value that replaced it
            raise ConflictError(f"memory {old.id} is an earlier value, replaced since; edit the current value "
                                "(its metadata may still change)")  # fmt: skip
        new = updated_version(self._core, old, text, metadata)
        if (new.text, new.metadata) == (old.text, old.metadata):
            return old  # nothing changes: no write, no history event
        return write_update(self._core, old, new, actor=clean_label(actor, field="actor", max_chars=200) or "api",
                            reason=clean_label(reason, field="reason"))  # fmt: skip

    def delete(
        self, memory_id: str, *, actor: str = "api", reason: str | None = None, **scope: Unpack[ScopeArgs]
    ) -> MemoryItem:
        """Soft delete: the memory leaves search, its validity closes, history keeps the text."""
        item = self.get(memory_id, **scope)
        if item.status == MemoryStatus.DELETED:
            return item
        self.lifecycle.set_status([item], MemoryStatus.DELETED, HistoryAction.DELETE,
                                  actor=clean_label(actor, field="actor", max_chars=200) or "api",
                                  reason=clean_label(reason, field="reason"))  # fmt: skip
        return self.get(item.id, **scope)

    def resolve_id(self, prefix: str, *, what: IdKind = "memory", **scope: Unpack[ScopeArgs]) -> str:
        """The full id that ``prefix`` (at least 4 characters, or a whole id) names in the scope: a memory, a
        job (``what="job"``) or a graph entity or relation (``what="graph"``). Ambiguous prefixes are refused
        with the candidates listed; an unknown one raises NotFoundError."""
        if what == "memory":
            return ids.memory_id(self._core.store, self._binding.scope(scope), prefix)
        if what == "job":
            return ids.job_id(self._core.store, self._binding.optional_scope(scope), self.tenant_id, prefix)
        if what == "graph":
            return ids.graph_id(self._core.store, self._binding.scope(scope), prefix)
        raise InvalidInputError(f"what must be memory, job or graph, not {what!r}")

    def delete_all(self, *, actor: str = "api", reason: str | None = None, **scope: Unpack[ScopeArgs]) -> int:
        """Soft-delete every live memory in the scope, in one transaction. Returns how many."""
        resolved = self._binding.scope(scope)
        live = (MemoryStatus.ACTIVE, MemoryStatus.PENDING, MemoryStatus.ARCHIVED)
        items: list[MemoryItem] = []
        while batch := self._core.store.list_memories(
            ListQuery(scope=resolved, filters=Filters(status=live), limit=10_000, offset=len(items))
        ):
            items.extend(batch)
        self.lifecycle.set_status(items, MemoryStatus.DELETED, HistoryAction.DELETE,
                                  actor=clean_label(actor, field="actor", max_chars=200) or "api",
                                  reason=clean_label(reason, field="reason") or "delete_all")  # fmt: skip
        return len(items)

    def mark_used(self, memory_ids: Sequence[str], **scope: Unpack[ScopeArgs]) -> int:
        """Tell memstrata these memories were used (an answer relied on them): that, not being retrieved,
        is what reinforces a memory. Ids outside the scope are ignored; returns how many were marked."""
        if isinstance(memory_ids, str):
            raise InvalidInputError("memory_ids must be a list of ids, not one string")
        checked = [clean_id(memory_id, field=f"memory_ids[{n}]") for n, memory_id in enumerate(memory_ids)]
        return self._core.access.record_now(self._binding.scope(scope), checked)

    # --- read -------------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Filters | Mapping[str, Any] | None = None,
        threshold: float | None = None,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        include_archived: bool = False,
        lifecycle: bool = True,
        understand_time: bool = True,
        graph: bool = True,
        record_access: bool = False,
        mode: Mode = "fast",
        **scope: Unpack[ScopeArgs],
    ) -> list[SearchHit]:
        """Hybrid search: exact key lookup, then keyword + dense (+ time range, + graph) candidates fused,
        then lifecycle-aware ranking (decay, recency, reinforcement, confidence).

        ``as_of`` answers from the memory as it was true then (valid time: superseded and deleted versions
        included if they held at that moment); ``known_at`` from what the store held then (record time).
        ``include_archived`` also searches cold storage. Search writes nothing; ``record_access=True`` counts
        the hits as used (buffered, off the read path) — prefer ``mark_used`` for what an answer relied on.
        ``mode="deep"`` understands, expands and re-searches the query with the configured model (offline
        heuristics without one); ``deep_search`` returns the same hits with the trace of how they were found.
        """
        search_query = self._search_query(query, scope, limit=limit, filters=filters, threshold=threshold,
                                          as_of=as_of, known_at=known_at, include_archived=include_archived,
                                          lifecycle=lifecycle, understand_time=understand_time,
                                          graph=graph)  # fmt: skip
        hits, _ = search_in_mode(self._core, search_query, checked_mode(mode), "chat")
        if record_access:
            self._core.access.record_later(search_query.scope, [hit.id for hit in hits])
        return hits

    def embed_queries(self, queries: Sequence[tuple[str, ScopeArgs]]) -> None:
        """Embed in one model call the queries searches are about to ask, each ``(query, scope)`` as ``search`` takes
        them. Their vectors are kept with the recent queries (``embedder.query_cache``), so each search then finds its
        own: the service runs fast searches one at a time on its event loop, where concurrent searches would each embed
        alone. A query that cannot be searched is passed over here: its search says what is wrong."""
        ahead = []
        for text, scope in queries:
            try:
                ahead.append(self._search_query(text, scope, limit=1, filters=None, threshold=None))
            except MemstrataError:
                continue
        self._core.embed_ahead(ahead)

    def deep_search(
        self,
        query: str,
        *,
        limit: int = 10,
        filters: Filters | Mapping[str, Any] | None = None,
        threshold: float | None = None,
        audience: Audience = "chat",
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> DeepResult:
        """Deep search with its trace: the understood question, every query searched, the evaluator's verdicts,
        why it stopped, model calls, tokens and seconds. ``audience="agent"`` allows more rounds
        (``deep.agent_rounds``, default 5) than a chat caller (``deep.chat_rounds``, default 3). ``as_of`` /
        ``known_at`` travel in time as in ``search``."""
        search_query = self._search_query(query, scope, limit=limit, filters=filters, threshold=threshold,
                                          as_of=as_of, known_at=known_at)  # fmt: skip
        return deep_result(self._core, search_query, checked_audience(audience))

    def context(
        self,
        query: str,
        *,
        budget_tokens: int = 2000,
        mode: Mode = "fast",
        limit: int = 10,
        filters: Filters | Mapping[str, Any] | None = None,
        audience: Audience = "chat",
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> MemoryContext:
        """What an agent should read for ``query``, within ``budget_tokens``: the rules layer (verbatim, first),
        key facts (every one whose key the query names), the user's standing facts (deep/profile.py: allergies,
        diet, home, work, partner, children, pets), the ``limit`` most relevant memories with their source
        turns and dates, then the session's recent turns when ``session_id`` is given; deduplicated, shortened
        to fit, each memory cited by id. Long-term memories come from the user's whole scope when ``user_id`` is
        given (what the user told any agent in any session: an agent passing its ``agent_id`` still reads the
        user's key facts), else from the agent's scope without its session; the memories included count as
        used. ``as_of`` / ``known_at`` travel in time as in :meth:`search`: the memories and key values that held
        then, or that the store held then."""
        resolved = self._binding.scope(scope)
        check_count(budget_tokens, "budget_tokens", 64, 1_000_000)
        # the user's memories from any agent and session, or an agent's from any session (bound ids stay bound)
        wider: ScopeArgs = {"session_id": None, **({"agent_id": None} if resolved.user_id else {})}
        long_term = self._binding.scope({**scope, **wider}) if resolved.user_id or resolved.agent_id else resolved
        search_query = self._search_query(
            query, {**scope, "session_id": long_term.session_id, "agent_id": long_term.agent_id}, limit=limit,
            filters=filters, threshold=None, as_of=as_of, known_at=known_at,
        )  # fmt: skip
        tenant_wide = self._view(ScopeBinding(tenant_id=self._binding.tenant_id))  # a view bound to a user reads
        try:  # the same rules as its tenant
            rules = tenant_wide.vault.rules(resolved.agent_id)
            rules_text, rules_files = rules.text, tuple(f.path for f in rules.files)
        except NotFoundError:  # the vault (and its rules) belongs to another tenant
            rules_text, rules_files = "", ()
        return build_context(self._core, search_query, session=resolved if resolved.session_id else None,
                             rules=rules_text, rules_files=rules_files,
                             budget_tokens=budget_tokens, mode=checked_mode(mode),
                             audience=checked_audience(audience))  # fmt: skip

    def _search_query(
        self,
        query: str,
        scope: ScopeArgs,
        *,
        limit: int,
        filters: Filters | Mapping[str, Any] | None,
        threshold: float | None,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
        include_archived: bool = False,
        lifecycle: bool = True,
        understand_time: bool = True,
        graph: bool = True,
    ) -> SearchQuery:
        resolved = self._binding.scope(scope)
        text = clean_text(query, field="query", max_chars=self._core.settings.limits.max_text_chars)
        parsed_filters = checked_filters(filters)
        as_of, known_at = clean_time(as_of, field="as_of"), clean_time(known_at, field="known_at")
        statuses = set(parsed_filters.status)
        if include_archived:
            statuses.add(MemoryStatus.ARCHIVED)
        if as_of is not None or known_at is not None:  # every version that may have held then; time decides
            statuses |= _HELD_AT_SOME_TIME
        parsed_filters = parsed_filters.model_copy(
            update={"status": tuple(sorted(statuses)), "valid_at": as_of, "known_at": known_at}
        )
        return parse_model(
            SearchQuery,
            {"scope": resolved, "text": text, "limit": limit, "threshold": threshold, "filters": parsed_filters,
             "now": as_of or known_at or self._core.clock(), "lifecycle": lifecycle,
             "understand_time": understand_time, "graph": graph},
            what="search",
        )  # fmt: skip

    def get(self, memory_id: str, **scope: Unpack[ScopeArgs]) -> MemoryItem:
        resolved = self._binding.scope(scope)
        return self.lifecycle.one(clean_id(memory_id), resolved)

    def get_all(
        self,
        *,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
        order_by: OrderField = "created_at",
        descending: bool = True,
        **scope: Unpack[ScopeArgs],
    ) -> list[MemoryItem]:
        parsed = checked_filters(filters)
        if parsed.valid_at is not None or parsed.known_at is not None:  # as search(as_of=): every version that
            # may have held then, time decides (a fact replaced since was left out of a listing of that day)
            parsed = parsed.model_copy(update={"status": tuple(sorted(set(parsed.status) | _HELD_AT_SOME_TIME))})
        query = parse_model(
            ListQuery,
            {"scope": self._binding.scope(scope), "filters": parsed,
             "limit": limit, "offset": check_count(offset, "offset", 0, 10**9),
             "order_by": order_by, "descending": descending},
            what="list query",
        )  # fmt: skip
        return self._core.store.list_memories(query)

    def history(self, memory_id: str, **scope: Unpack[ScopeArgs]) -> list[HistoryEvent]:
        """Every change to a memory, oldest first, including the versions it superseded."""
        resolved = self._binding.scope(scope)
        store = self._core.store
        memory_id = clean_id(memory_id)
        events = store.history(resolved, memory_id)
        if not events:
            raise NotFoundError(f"no history for memory {memory_id} in scope {resolved.label()}")
        seen = {memory_id}
        superseded = events[0].details.get("supersedes")
        while isinstance(superseded, str) and superseded not in seen:  # walk back through older versions
            seen.add(superseded)
            older = store.history(resolved, superseded)
            events = older + events
            superseded = older[0].details.get("supersedes") if older else None
        return list({event.id: event for event in events}.values())

    def messages(self, *, limit: int = 1000, **scope: Unpack[ScopeArgs]) -> list[StoredMessage]:
        """The raw turns stored for a scope, oldest first: the provenance behind every memory."""
        return self._core.store.messages(self._binding.scope(scope), limit=check_count(limit, "limit", 1, 100_000))

    # --- shortcuts to the sub-APIs (same code paths) ----------------------------------------------------
    def flush(
        self, *, timeout_s: float | None = None, progress: ProgressHook | None = None, **scope: Unpack[ScopeArgs]
    ) -> list[Job]:
        return self.jobs.flush(timeout_s=timeout_s, progress=progress, **scope)

    def list_jobs(self, *, status: Sequence[str] = (), limit: int = 100, **scope: Unpack[ScopeArgs]) -> list[Job]:
        return self.jobs.list(status=status, limit=limit, **scope)

    def retry_job(self, job_id: str) -> Job:
        return self.jobs.retry(job_id)

    def review_queue(self, *, limit: int = 100, **scope: Unpack[ScopeArgs]) -> list[MemoryItem]:
        return self.lifecycle.review_queue(limit=limit, **scope)

    def confirm(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self.lifecycle.confirm(memory_id, actor=actor, **scope)

    def reject(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self.lifecycle.reject(memory_id, actor=actor, **scope)

    def archive(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self.lifecycle.archive(memory_id, actor=actor, **scope)

    def restore(self, memory_id: str, *, actor: str = "api", **scope: Unpack[ScopeArgs]) -> MemoryItem:
        return self.lifecycle.restore(memory_id, actor=actor, **scope)

    def forget(self, what: str, *, confirm: bool = False, min_similarity: float = 0.45, limit: int = 20,
               **scope: Unpack[ScopeArgs]) -> ForgetResult:  # fmt: skip
        return self.lifecycle.forget(what, confirm=confirm, min_similarity=min_similarity, limit=limit, **scope)

    def consolidate(self, *, threshold: float = 0.92, **scope: Unpack[ScopeArgs]) -> int:
        return self.lifecycle.consolidate(threshold=threshold, **scope)

    def maintain(self, *, stop: Callable[[], bool] = lambda: False) -> MaintenanceReport:
        return self.lifecycle.maintain(stop=stop)

    def session_context(self, session_id: str, *, budget_tokens: int = 2000,
                        **owner: Unpack[OwnerArgs]) -> list[Message]:  # fmt: skip
        return self.sessions.context(session_id, budget_tokens=budget_tokens, **owner)

    def end_session(self, session_id: str, *, wait: bool = False, **owner: Unpack[OwnerArgs]) -> list[Job]:
        return self.sessions.end(session_id, wait=wait, **owner)

    def stats(self, **scope: Unpack[ScopeArgs]) -> StoreStats:
        return self.admin.stats(**scope)

    def purge(self, memory_id: str, **scope: Unpack[ScopeArgs]) -> None:
        self.admin.purge(memory_id, **scope)

    def reset(self, *, confirm: bool = False) -> None:
        self.admin.reset(confirm=confirm)

    def erase_user(self, user_id: str, *, confirm: bool = False) -> ErasureReport:
        return self.admin.erase_user(user_id, confirm=confirm)

    def reindex(self, *, batch_size: int = 256) -> Iterator[int]:
        return self.admin.reindex(batch_size=batch_size)

    def export_jsonl(self, path: str | Path) -> int:
        return self.admin.export_jsonl(path)

    def import_jsonl(self, path: str | Path) -> ImportReport:
        return self.admin.import_jsonl(path)

    # --- knowledge -----------------------------------------------------------------------------------
    @property
    def knowledge(self) -> KnowledgeAPI:
        """Documents as searchable knowledge: ingest files, folders, URLs; collections; text around a hit."""
        # on first use: the converter, fetcher and their HTTP client cost every process ~10 MB
        from memstrata.facade.knowledge import KnowledgeAPI

        return KnowledgeAPI(self._core, self._binding)

    def ingest(self, target: str | Path | Sequence[str | Path], **options: Any) -> IngestReport:
        """Shortcut for :meth:`KnowledgeAPI.ingest` (``collection=``, ``chunker=``, ``size=``, scope ids...)."""
        return self.knowledge.ingest(target, **options)

    # --- lifetime ----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop background threads and close the store. A view's close does nothing: close the original."""
        if self._owner:
            self._core.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
