"""State and helpers shared by every part of the Memory facade (see memory.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from typing import Any, Self

from memstrata.config import Settings
from memstrata.errors import (
    EmbeddingMismatchError,
)
from memstrata.indexing import index_text
from memstrata.providers.cache import embed_with_cache
from memstrata.providers.protocol import Embedder, embedding_identity
from memstrata.providers.rules_extractor import RulesExtractor
from memstrata.read.pipeline import ReadSettings
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import (
    MemoryItem,
    Scope,
    utcnow,
)
from memstrata.validation import guarded
from memstrata.write.apply import Gate
from memstrata.write.extract import Extractor
from memstrata.write.pipeline import WriteDeps
from memstrata.write.reconcile import Reconciler, RulesReconciler
from memstrata.write.worker import BackgroundWorker, JobRunner

Clock = Callable[[], datetime]


class MemoryBase:
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
        self._read_settings = ReadSettings(
            candidates=self.settings.search.candidates,
            rrf_k=self.settings.search.rrf_k,
            keyword_weight=self.settings.search.keyword_weight,
            dense_weight=self.settings.search.dense_weight,
            lifecycle=self.settings.lifecycle,
            graph=self.settings.graph,
        )
        self.extractor: Extractor = extractor or RulesExtractor()
        self.reconciler: Reconciler = reconciler or RulesReconciler()
        deps = WriteDeps(
            store=store,
            embed_texts=lambda texts: embed_with_cache(self.embedder, self.store, texts),
            embedding_id=embedding_identity(embedder),
            extractor=self.extractor,
            reconciler=self.reconciler,
            clock=clock,
            gate=Gate(self.settings.lifecycle.pending_below, self.settings.lifecycle.promote_step),
            graph=self.settings.graph,
        )
        write = self.settings.write
        self._runner = JobRunner(deps, lease_s=write.lease_s, batch_jobs=write.batch_jobs)
        # One slot shared by every tenant view (views are shallow copies): one worker thread per Memory.
        self._worker_slot: list[BackgroundWorker] = []

    llm_reason = "rules extractor (no model passed to Memory)"
    _tenant: str | None = None

    def for_tenant(self, tenant_id: str | None) -> Self:
        """A view of this Memory bound to one tenant: every call it makes is scoped to that tenant.

        Views share the store, embedder and worker; close the Memory they came from, not the view.
        """
        view = copy.copy(self)
        view._tenant = guarded(lambda: Scope(user_id="-", tenant_id=tenant_id), what="tenant").tenant_id
        return view

    def close(self) -> None:
        while self._worker_slot:
            self._worker_slot.pop().stop()
        self.store.close()

    def __enter__(self) -> Self:
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

    def _wake_worker(self) -> None:
        if not self._worker_slot:
            self._worker_slot.append(BackgroundWorker(self._runner))
        self._worker_slot[0].wake()
