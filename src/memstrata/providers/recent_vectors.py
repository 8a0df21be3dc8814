"""The vectors of recent search queries, kept so the same query is not embedded again.

Agents ask the same things over and over: ``context()`` asks the scope seven standing questions on every call
(deep/profile.py) and embeds the task once to order them and once to search it; deep search re-runs its question
each round; a chat client repeats its last query. Each costs the bundled model 1-3 ms, a third of a search on
a small scope (bench/results/2026-12-06-query-vectors.md). A query's vector depends only on its text and the
model, so a bounded least-recently-used table by text serves repeats exactly.

Only search queries come here (``MemoryCore.query_embedder``); the write path embeds memories through its own
path and the store's embedding cache. Calls of more than ``most_texts`` texts pass through uncached, so no
large call flushes the table. Callers get fresh arrays: changing one never changes a later answer.

Repeats count within one scope (:meth:`RecentVectors.for_scope`): a search is never answered faster because
another user asked the same words, so timing tells no user what another one asked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memstrata.errors import ProviderError
from memstrata.providers.protocol import Embedder, InFrontOf, Vectors
from memstrata.types import Scope


class RecentVectors(InFrontOf):
    """Wraps an embedder; ``embed_batch`` of at most ``most_texts`` texts answers repeats from the last ``size``
    texts embedded in the same partition (a scope: :meth:`for_scope`). ``hits`` and ``misses`` count texts
    (observability, tests)."""

    def __init__(self, inner: Embedder, *, size: int, most_texts: int = 16) -> None:
        super().__init__(inner)
        self.size = max(1, size)
        self.most_texts = most_texts
        self._lock = threading.Lock()
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def for_scope(self, scope: Scope) -> Embedder:
        """The embedder of one scope's searches: repeats of that scope only."""
        return _Partition(self, _partition_of(scope))

    def embed_batch(self, texts: Sequence[str], partition: str = "") -> Vectors:
        if not texts or len(texts) > self.most_texts:
            return self.inner.embed_batch(texts)
        known = self._known(texts, partition)
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        if missing:  # one model call for what is new; an error reaches the caller and nothing is kept
            fresh = self.inner.embed_batch(missing)
            if len(fresh) != len(missing):
                raise ProviderError(f"the embedder returned {len(fresh)} vectors for {len(missing)} texts")
            known |= self._keep(missing, fresh, partition)
        return np.stack([known[text] for text in texts]).astype(np.float32, copy=False)

    def prefetch(self, items: Sequence[tuple[Scope, str]]) -> None:
        """Embed, in one model call, the texts of these scopes not kept yet (searches about to ask them)."""
        wanted = dict.fromkeys((_partition_of(scope), text) for scope, text in items)
        with self._lock:
            missing = [key for key in wanted if key not in self._vectors]
        texts = list(dict.fromkeys(text for _, text in missing))
        if not texts:
            return
        fresh = self.inner.embed_batch(texts)
        if len(fresh) != len(texts):
            raise ProviderError(f"the embedder returned {len(fresh)} vectors for {len(texts)} texts")
        vector_of = dict(zip(texts, fresh, strict=True))
        for partition, text in missing:
            self._keep([text], np.stack([vector_of[text]]), partition)

    def _known(self, texts: Sequence[str], partition: str) -> dict[str, np.ndarray]:
        with self._lock:
            known = {}
            for text in texts:
                vector = self._vectors.get((partition, text))
                if vector is not None:
                    self._vectors.move_to_end((partition, text))
                    known[text] = vector
            self.hits += sum(1 for text in texts if text in known)
            self.misses += sum(1 for text in texts if text not in known)
            return known

    def _keep(self, texts: list[str], vectors: Vectors, partition: str) -> dict[str, np.ndarray]:
        kept = {text: np.array(vector, dtype=np.float32) for text, vector in zip(texts, vectors, strict=False)}
        with self._lock:
            for text, vector in kept.items():
                self._vectors[partition, text] = vector
                self._vectors.move_to_end((partition, text))
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return kept


def _partition_of(scope: Scope) -> str:
    fields = (scope.tenant_id, scope.user_id, scope.agent_id, scope.session_id)
    return "\x1f".join(field or "" for field in fields)


class _Partition(InFrontOf):
    def __init__(self, recent: RecentVectors, partition: str) -> None:
        super().__init__(recent)
        self.recent, self.partition = recent, partition

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        return self.recent.embed_batch(texts, self.partition)
