"""Each extracted fact's own candidates: the live memories it might repeat, refine or contradict.

Found by meaning (vector search) and by words (keyword search: names and places a vector blurs), plus the
facts of earlier turns of the same job. A memory that is not among a fact's candidates can never be changed
because of that fact: the engine checks every decision against this list (``write/decide.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memstrata.lexical import search_terms
from memstrata.query import Filters
from memstrata.storage.protocol import Store, Vector
from memstrata.types import MemoryItem, MemoryKind, MemoryStatus, Scope
from memstrata.write.decisions import Candidate, NewFact
from memstrata.write.evidence import evidence

# Pending memories are candidates too: saying a pending fact again is what promotes it.
_LIVE = Filters(exclude_kind=(MemoryKind.EPISODE.value,), status=(MemoryStatus.ACTIVE, MemoryStatus.PENDING))


@dataclass(frozen=True)
class CandidateRules:
    """How wide the net is. Measured on labelled bilingual pairs with the bundled embedder (USE-multilingual):
    related pairs ("moved to Hangzhou" / "lives in Shanghai", "换了工作" / "在阿里工作") score 0.34-0.84, unrelated
    ones 0.18-0.49, so similarity alone cannot separate them. A pair is asked about when it is close (0.45) or
    when the engine sees other evidence (a shared word or everyday topic) and it is not far apart (0.2)."""

    per_search: int = 5  # hits taken from each search, per fact
    per_fact: int = 3  # candidates asked about, per fact (the most similar)
    close: float = 0.45  # similar enough to be evidence on its own
    floor: float = 0.2  # below this nothing is asked, whatever words are shared


def _similarity(a: Vector, b: Vector) -> float:
    return float(np.dot(np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)))


class CandidateFinder:
    def __init__(
        self,
        store: Store,
        scope: Scope,
        embed: Callable[[Sequence[str]], list[Vector]],
        rules: CandidateRules | None = None,
    ) -> None:
        self._store = store
        self._scope = scope
        self._embed = embed
        self.rules = rules or CandidateRules()

    def stored(self, fact: NewFact) -> list[Candidate]:
        """Live stored memories worth asking about, most similar first."""
        vector = self._embed([fact.text])[0]
        ids = [hit.memory_id for hit in self._store.vector_search(self._scope, vector, _LIVE, self.rules.per_search)]
        tokens = search_terms(fact.text)
        if tokens:
            found = self._store.keyword_search(self._scope, tokens, _LIVE, self.rules.per_search)
            ids += [hit.memory_id for hit in found if hit.memory_id not in ids]
        items = self._store.get(self._scope, ids)
        return self._rank(fact, vector, items, in_batch=False)

    def earlier_in_batch(self, fact: NewFact, earlier: Sequence[MemoryItem]) -> list[Candidate]:
        """Facts of earlier turns of this job, already planned as memories, worth asking about."""
        if not earlier:
            return []
        return self._rank(fact, self._embed([fact.text])[0], earlier, in_batch=True)

    def _rank(self, fact: NewFact, vector: Vector, items: Sequence[MemoryItem], *, in_batch: bool) -> list[Candidate]:
        vectors = self._embed([item.text for item in items]) if items else []
        found = []
        for item, other in zip(items, vectors, strict=True):
            similarity = _similarity(vector, other)
            why = evidence(fact.text, item.text, similarity, self.rules.close)
            if why is not None and similarity >= self.rules.floor:
                found.append(Candidate(item, similarity, why, in_batch))
        found.sort(key=lambda c: c.similarity, reverse=True)
        return found[: self.rules.per_fact]
