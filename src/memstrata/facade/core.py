"""The state every part of the facade shares: store, embedder, settings, clock, the write path's job
runner and background worker, and the access log. Views of a Memory (tenant, scoped) share one core;
the core is the only mutable object among them, and it guards its own lazily started threads."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime

from memstrata.config import Settings
from memstrata.errors import EmbeddingMismatchError, ProviderError
from memstrata.facade.access import AccessLog
from memstrata.indexing import index_text
from memstrata.lifecycle.maintain import release_idle_sessions
from memstrata.providers.cache import Embedded, embed_with_cache
from memstrata.providers.coalescing import CoalescingEmbedder
from memstrata.providers.factory import cap_blas_threads
from memstrata.providers.llm import ChatModel
from memstrata.providers.protocol import Embedder, embedding_identity
from memstrata.providers.recent_vectors import RecentVectors
from memstrata.query import Filters, ListQuery, SearchQuery
from memstrata.read.pipeline import likely_embedded
from memstrata.read.pipeline import search as run_search
from memstrata.read.settings import ReadSettings
from memstrata.storage.protocol import Store, Vector, WriteBatch
from memstrata.types import MemoryItem, MemoryStatus, Scope, SearchHit
from memstrata.write.apply import Gate
from memstrata.write.extract import Extractor
from memstrata.write.pipeline import WriteDeps
from memstrata.write.reconcile import Reconciler, RulesReconciler
from memstrata.write.rules_extractor import RulesExtractor
from memstrata.write.worker import BackgroundWorker, JobRunner

Clock = Callable[[], datetime]
log = logging.getLogger(__name__)


class MemoryCore:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        settings: Settings,
        clock: Clock,
        extractor: Extractor | None,
        reconciler: Reconciler | None,
        llm_reason: str,
        chat_model: ChatModel | None = None,
    ) -> None:
        cap_blas_threads(settings.embedder.blas_threads)  # before any embedding or vector maths runs
        self.store = store
        self.embedder = embedder
        # Search queries go through here: concurrent searches share model calls (providers/coalescing.py), and a
        # repeated query is not embedded again (providers/recent_vectors.py).
        self._query_embedder = CoalescingEmbedder(embedder, max_texts=settings.embedder.query_batch)
        cache = settings.embedder.query_cache
        self._recent_queries = RecentVectors(self._query_embedder, size=cache) if cache else None
        self.settings = settings
        self.clock = clock
        self.llm_reason = llm_reason
        self.chat_model = chat_model  # the configured model (None: rules only), for summaries and deep search
        self.extractor: Extractor = extractor or RulesExtractor()
        self.reconciler: Reconciler = reconciler or RulesReconciler()
        self.read_settings = ReadSettings.from_settings(settings)
        deps = WriteDeps(
            store=store,
            embed_texts=self.embed_texts,
            embedding_id=embedding_identity(embedder),
            extractor=self.extractor,
            reconciler=self.reconciler,
            clock=clock,
            gate=Gate(settings.lifecycle.pending_below, settings.lifecycle.promote_step),
            graph=settings.graph,
            timezone=settings.time.zone(),
        )
        self.runner = JobRunner(deps, lease_s=settings.write.lease_s, batch_jobs=settings.write.batch_jobs)
        self.access = AccessLog(store, clock)
        self._worker: BackgroundWorker | None = None
        self._worker_lock = threading.Lock()
        self._closed = False

    # --- embeddings -----------------------------------------------------------------------
    def identity(self) -> str:
        """The configured embedding identity, refused early if the store holds another one."""
        identity = embedding_identity(self.embedder)
        stored = self.store.embedding_id()
        if stored is not None and stored != identity:
            raise EmbeddingMismatchError(stored=stored, configured=identity)
        return identity

    def embed_texts(self, texts: Sequence[str], tenant_id: str | None) -> Embedded:
        return embed_with_cache(self.embedder, self.store, list(texts), tenant_id)

    def vector_batch(self, items: list[MemoryItem]) -> WriteBatch:
        """Embed (through each tenant's cache) and package vectors plus new cache entries as one write."""
        vectors: list[tuple[str, Vector]] = []
        cache_entries: list[tuple[str, Vector]] = []
        for tenant_id in dict.fromkeys(item.scope.tenant_id for item in items):
            owned = [item for item in items if item.scope.tenant_id == tenant_id]
            embedded = self.embed_texts([index_text(item) for item in owned], tenant_id)
            vectors.extend((item.id, vector) for item, vector in zip(owned, embedded.vectors, strict=True))
            cache_entries.extend(embedded.new_cache_entries)
        return WriteBatch(vectors=vectors, embedding_id=embedding_identity(self.embedder), cache_entries=cache_entries)

    # --- read -----------------------------------------------------------------------------
    def query_embedder(self, scope: Scope) -> Embedder:
        """What embeds the queries of ``scope``: a repeat of that scope's reuses its vector."""
        recent = self._recent_queries
        return self._query_embedder if recent is None else recent.for_scope(scope)

    def embed_ahead(self, queries: Sequence[SearchQuery]) -> None:
        """The vectors these searches are about to ask for, in one model call, kept with the recent queries (off with
        ``embedder.query_cache = 0``). A failing model is left for each search to meet on its own."""
        if self._recent_queries is None or not queries:
            return
        try:
            self._recent_queries.prefetch(
                [(query.scope, likely_embedded(query, self.read_settings)) for query in queries]
            )
        except ProviderError as exc:
            log.debug("queries not embedded ahead: %s", exc)

    def search(self, query: SearchQuery) -> list[SearchHit]:
        """The one search path: ``memory.search``, ``forget`` and ``context`` all come through here."""
        self.identity()
        return run_search(self.store, self.query_embedder(query.scope), query, self.read_settings)

    # --- background work --------------------------------------------------------------------
    def kept_versions(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        """The earlier versions that edits of these memories kept for time travel (records/versions.py)."""
        found: list[MemoryItem] = []
        for memory_id in memory_ids:
            filters = Filters(status=(MemoryStatus.SUPERSEDED,), metadata={"superseded_by": memory_id})
            versions: list[MemoryItem] = []
            while page := self.store.list_memories(ListQuery(scope=scope, filters=filters, limit=1000,
                                                             offset=len(versions))):  # fmt: skip
                versions.extend(page)
            found.extend(versions)
        return found

    def wake_worker(self) -> None:
        if not self.settings.write.background:
            return
        with self._worker_lock:
            if self._closed:
                return
            if self._worker is None:
                # Turns of a session gone quiet that still wait for more are handed over by the worker itself: a
                # short conversation through MCP, whose client may never end the session, waited until someone ran
                # maintenance (a user trial)
                self._worker = BackgroundWorker(self.runner, when_idle=self._release_quiet_sessions)
            self._worker.wake()

    def _release_quiet_sessions(self) -> int:
        return len(release_idle_sessions(self.store, self.clock(), self.settings.lifecycle))

    def close(self) -> None:
        with self._worker_lock:
            self._closed = True
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.stop()
        self.access.close()
        self.store.close()
