"""Fusing the hits of several queries (RAG-Fusion) on their calibrated relevance, not their ranks.

Each query's hits carry a relevance in [0, 1] that means the same in every query (read/evidence.py),
so fusion can keep how good a match is: a memory's fused relevance is its best weighted relevance over
the queries, raised a little toward 1 by the runner-up (two queries agreeing is evidence too):
``fused = a + (1 - a) * AGREEMENT * b`` with ``a >= b`` the two best weighted relevances. The raise needs
the question or the message itself among the agreeing queries: paraphrases, a hypothetical answer and the
evaluator's probes are rewrites of one reading, and a look-alike they all match is no better for it
(measured without a model, bench/results/2026-12-02-deepoffline-v6-anchored.md: deep LoCoMo recall@10
0.820 -> 0.830, MADial zh 0.773 and en 0.737 -> 0.739; fast 0.825 / 0.754 / 0.724). A query's weight
says how close it stays to what was asked (the question itself 1.0, a hypothetical answer less, the
general step-back question least). Rank fusion (RRF) was measured against it (bench/deep_bench.py).
The hit's lifecycle factor (bounded, read/rank.py) then applies as in fast search.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memstrata.deep.trace import Origin
from memstrata.read.fuse import relevance_floor
from memstrata.types import SearchHit

AGREEMENT = 0.5  # share of the runner-up's relevance that counts toward the missing relevance

# The message as sent, when understanding found its question inside it: the rest is small talk, whose words
# would otherwise pull look-alike memories (tired, busy, overtime...) level with the answer.
CHATTER_WEIGHT = 0.7

WEIGHTS: dict[Origin, float] = {
    "original": 1.0,
    "question": 1.0,
    "sub_question": 1.0,
    "evaluator": 1.0,
    # The offline evaluator's probe (an entity or content words alone) finds what shares a name, not what answers:
    # deep search without a model scored LoCoMo recall@10 0.747 with it at 0.6, 0.795 at 0.4, 0.820 at 0.2 (the same
    # as no evaluator; fast 0.825), bench/results/2026-12-02-deep-offline-v3.md and its note.
    "keywords": 0.2,
    "multi_query": 0.9,
    "hyde": 0.85,
    "step_back": 0.6,
}


def message_weight(message: str, question: str) -> float:
    """The weight of the message as sent: lowered when the question is a shorter part of it (chatter around)."""
    asked, sent = " ".join(question.lower().split()), " ".join(message.lower().split())
    return CHATTER_WEIGHT if asked and asked != sent and asked.rstrip("?？") in sent else WEIGHTS["original"]


@dataclass
class _Found:
    best: SearchHit
    weighted: list[float] = field(default_factory=list)
    anchored: bool = False  # found by the question or the message itself

    def fused(self) -> float:
        if not self.anchored:  # rewrites of one reading agreeing with each other are not a second witness
            return max(self.weighted)
        top = sorted(self.weighted, reverse=True)[:2]
        first = top[0]
        second = top[1] if len(top) > 1 else 0.0
        return first + (1.0 - first) * AGREEMENT * second


@dataclass
class Pool:
    """Every memory any query found so far, with each query's weighted relevance for it."""

    found: dict[str, _Found] = field(default_factory=dict)
    searched: set[str] = field(default_factory=set)

    def add(self, hits: Sequence[SearchHit], weight: float, *, anchor: bool = False) -> None:
        """``anchor``: the hits of the question or of the message as sent (see the module docstring)."""
        for hit in hits:
            relevance = hit.breakdown.relevance * weight
            entry = self.found.get(hit.id)
            if entry is None:
                self.found[hit.id] = _Found(hit, [relevance], anchor)
                continue
            entry.anchored |= anchor
            entry.weighted.append(relevance)
            if hit.breakdown.relevance > entry.best.breakdown.relevance:
                entry.best = hit

    def ranked(self, minimum: float, below_best: float | None = None) -> list[SearchHit]:
        """Every memory whose fused relevance clears ``minimum`` (or, for a conversation as the query, ``below_best``
        of the best one's: :func:`memstrata.read.fuse.relevance_floor`), best first; the hit's breakdown carries
        the fused relevance, and its score that times the memory's lifecycle factor."""
        relevances = {memory_id: entry.fused() for memory_id, entry in self.found.items()}
        floor = relevance_floor(minimum, max(relevances.values(), default=0.0), below_best)
        fused = []
        for memory_id, entry in self.found.items():
            relevance = relevances[memory_id]
            if relevance < floor:
                continue
            factor = entry.best.breakdown.lifecycle_factor
            breakdown = entry.best.breakdown.model_copy(update={"fused": relevance, "relevance": relevance,
                                                                "final": relevance * factor})  # fmt: skip
            fused.append(entry.best.model_copy(update={"score": relevance * factor, "breakdown": breakdown}))
        fused.sort(key=lambda hit: hit.score, reverse=True)
        return fused
