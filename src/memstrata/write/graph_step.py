"""The graph step of the write path: triples from the model and from the patterns -> resolved entities and
edges, linked to the memories that state them, planned into the job's one transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from memstrata.config import GraphSettings
from memstrata.graph.extracted import Triple
from memstrata.graph.names import USER_ALIASES, USER_NAME, normalize
from memstrata.graph.plan import GraphContext, GraphPlan, plan_graph
from memstrata.graph.rules import RulesGraphExtractor
from memstrata.lifecycle.timeparse import find_time_span
from memstrata.patterns import lazy_pattern
from memstrata.records.graph import Entity
from memstrata.storage.protocol import Store, Vector
from memstrata.types import MemoryItem, Message, Scope

_PATTERNS = RulesGraphExtractor()


def gather_triples(model_triples: Sequence[Triple], turns: Sequence[Message]) -> list[Triple]:
    """The model's triples plus the patterns' (cheap and precise; they catch what a small model drops),
    one per (subject, relation, object, ended): the model's wording wins a tie. Each is dated by its turn."""
    seen: dict[tuple[str, str, str, bool], Triple] = {}
    for triple in (*model_triples, *_PATTERNS.extract(turns)):
        seen.setdefault(triple.key(), triple)
    by_id = {turn.id: turn for turn in turns}
    return [_dated(triple, by_id) for triple in seen.values()]


_CLAUSE = lazy_pattern(r"[。！？!?；;，,\n]|(?<=\.)\s")


def _dated(triple: Triple, turns: dict[str, Message]) -> Triple:
    """Valid time of an edge: the past moment its clause names ("我上个月搬到了杭州"), resolved against the turn's
    own timestamp; without one the graph uses the time the turn was said. A period that is not over ("this
    week") or still to come ("下周去成都") does not start a relation early."""
    if triple.event_time:
        return triple
    target = triple.target.name.casefold()
    for message_id in triple.message_ids:
        turn = turns.get(message_id)
        if turn is None:
            continue
        for clause in _CLAUSE.split(turn.content):
            if target and target in clause.casefold():
                span = find_time_span(clause, turn.timestamp)
                if span is not None and span.end <= turn.timestamp:  # wholly past, as for facts (write/facts.py)
                    return replace(triple, event_time=span.start.isoformat())
    return triple


def memory_linker(items: Sequence[MemoryItem]) -> Callable[[Triple, Entity, Entity], tuple[str, ...]]:
    """A relation points at the memories that state it: facts of the same turns naming both ends, and the
    episodes (verbatim turns) it came from. Graph retrieval returns these."""

    def names(entity: Entity) -> set[str]:
        found = {normalize(name) for name in entity.names()}
        return found | ({normalize(alias) for alias in USER_ALIASES} if entity.name == USER_NAME else set())

    def link(triple: Triple, source: Entity, target: Entity) -> tuple[str, ...]:
        wanted = set(triple.message_ids)
        linked = []
        for item in items:
            if not wanted & set(item.provenance.message_ids):
                continue
            text = normalize(item.text)
            states_both = all(any(name and name in text for name in names(end)) for end in (source, target))
            if item.kind == "episode" or states_both:
                linked.append(item.id)
        return tuple(linked)

    return link


def plan_graph_step(
    *,
    store: Store,
    settings: GraphSettings,
    scope: Scope,
    triples: Sequence[Triple],
    turns: Sequence[Message],
    memories: Sequence[MemoryItem],
    embed: Callable[[Sequence[str]], list[Vector]],
    embedding_id: str,
    now: datetime,
    actor: str,
) -> GraphPlan:
    if not settings.enabled:
        return GraphPlan()
    ctx = GraphContext(
        store=store,
        scope=scope,
        embed=embed,
        embedding_id=embedding_id,
        threshold=settings.resolution_threshold,
        now=now,
        actor=actor,
        link=memory_linker(memories),
        turn_times={turn.id: turn.timestamp for turn in turns},
    )
    return plan_graph(ctx, gather_triples(triples, turns))
