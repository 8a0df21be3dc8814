"""The closed set of reconcile decisions, and the check that a set of them can be applied.

The model answers with small integers; :func:`resolve_decisions` maps them back to facts and memory
ids and refuses anything that would be unsafe to apply: unknown ids, a memory changed twice, a
missing text. A fact the model forgot to decide is *added*, never dropped, and marked as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memstrata.errors import ProviderError
from memstrata.graph.extracted import Triple
from memstrata.prompts.reconcile_memories import Decision
from memstrata.types import MemoryItem


class InvalidDecisionsError(ProviderError):
    """The model's decisions cannot be applied as a whole; nothing is written."""


@dataclass(frozen=True)
class NewFact:
    text: str
    kind: str
    confidence: float
    message_ids: tuple[str, ...]
    key: str | None = None
    event_time: str | None = None


@dataclass(frozen=True)
class Extraction:
    """What one extractor call found: facts, and relation triples for the graph (models only; the
    pattern-based graph extractor runs in the pipeline for every extractor)."""

    facts: list[NewFact] = field(default_factory=list)
    relations: list[Triple] = field(default_factory=list)

    def __add__(self, other: Extraction) -> Extraction:
        return Extraction(self.facts + other.facts, self.relations + other.relations)


@dataclass(frozen=True)
class Add:
    fact: NewFact
    defaulted: bool = False  # the model gave no decision for this fact; it is kept anyway


@dataclass(frozen=True)
class Update:
    fact: NewFact
    target: MemoryItem
    text: str


@dataclass(frozen=True)
class Delete:
    fact: NewFact
    target: MemoryItem


@dataclass(frozen=True)
class Noop:
    fact: NewFact
    target: MemoryItem | None
    reason: str


Resolved = Add | Update | Delete | Noop


def resolve_decisions(
    decisions: Sequence[Decision], facts: Sequence[NewFact], existing: Sequence[MemoryItem]
) -> list[Resolved]:
    by_fact: dict[int, Decision] = {}
    touched: set[int] = set()
    for decision in decisions:
        if not 0 <= decision.fact < len(facts):
            continue  # a decision about a fact that does not exist changes nothing; every real fact is decided below
        if decision.fact in by_fact:
            raise InvalidDecisionsError(f"fact {decision.fact} has two decisions")
        if decision.action in ("UPDATE", "DELETE"):
            if decision.target is None or not 0 <= decision.target < len(existing):
                raise InvalidDecisionsError(f"{decision.action} of fact {decision.fact} names no existing memory")
            if decision.target in touched:
                raise InvalidDecisionsError(f"memory {decision.target} is updated or deleted twice")
            touched.add(decision.target)
        if decision.action == "UPDATE" and not (decision.text and decision.text.strip()):
            raise InvalidDecisionsError(f"UPDATE of fact {decision.fact} has no text")
        by_fact[decision.fact] = decision
    return [_resolve(by_fact.get(index), fact, existing) for index, fact in enumerate(facts)]


def _resolve(decision: Decision | None, fact: NewFact, existing: Sequence[MemoryItem]) -> Resolved:
    if decision is None:
        return Add(fact, defaulted=True)
    target = existing[decision.target] if decision.target is not None and 0 <= decision.target < len(existing) else None
    if decision.action == "UPDATE" and target is not None:
        return Update(fact, target, (decision.text or fact.text).strip())
    if decision.action == "DELETE" and target is not None:
        return Delete(fact, target)
    if decision.action == "NONE":
        return Noop(fact, target, "model: already known")
    return Add(fact)
