"""Graph retrieval: link the entities a query names, walk their neighbourhood, rank what the edges point at.

Linking is by name: every live entity whose name or alias occurs in the normalised query (latin names on
word boundaries; one-character names never, they match everywhere); the user node answers to "我" / "I", and
the user's relatives to their relation ("我妹妹", "my wife": :func:`kin_of_user`).
Relations are ranked by hop, then confidence, then recency; each contributes the memories that state it,
in that order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memstrata.graph.names import USER_ALIASES, USER_NAME, normalize
from memstrata.graph.vocabulary import ASKED_BY, EN_FAMILY, FAMILY, SYMMETRIC
from memstrata.patterns import lazy_pattern
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import Store
from memstrata.types import Scope


@dataclass(frozen=True)
class GraphHit:
    memory_id: str
    hop: int
    relation: str  # "王总 likes 红酒": the edge that brought the memory in
    on_topic: bool = True  # the edge is of a relation the query asks for, or the query asks for none in particular


def relations_asked(query: str) -> frozenset[str] | None:
    """The relations a query asks for by its words ("住在哪" lives_in and its kin), or None when it names none."""
    asked = [relations for relations, words in _ASKED if words.search(query)]
    return frozenset().union(*asked) if asked else None


_ASKED = [(relations, lazy_pattern(words, re.IGNORECASE)) for relations, words in ASKED_BY]


def _mentions(query: str, name: str) -> bool:
    wanted = normalize(name)
    if len(wanted) < 2:
        return False
    if wanted.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(wanted)}(?![a-z0-9])", query) is not None
    return wanted in query


def link_entities(query: str, entities: Sequence[Entity]) -> list[Entity]:
    """Entities the query names, longest name first ("北京市朝阳区" before "北京")."""
    folded = normalize(query)
    spaced = " ".join(query.casefold().split())  # latin names keep their word boundaries
    linked = []
    for entity in entities:
        names = (*entity.names(), *(USER_ALIASES if entity.name == USER_NAME else ()))
        if any(_mentions(spaced if normalize(n).isascii() else folded, n) for n in names if n != USER_NAME):
            linked.append(entity)
    return sorted(linked, key=lambda e: -len(e.name))


# "我妹妹" / "my sister": the speaker's relative, named by the relation rather than by name.
_KIN_ASKED = [
    (relation, lazy_pattern(rf"我的?(?:{FAMILY[relation]})|\bmy (?:{EN_FAMILY[relation]})s?\b", re.I))
    for relation in FAMILY
]


def kin_of_user(store: Store, scope: Scope, query: str, entities: Sequence[Entity]) -> list[str]:
    """Ids of the people the query names by their relation to the user ("我妹妹在哪家公司上班?" names the
    user's sibling): the other ends of the user's current edges of those relations (of a directed one, such as
    parent_of, only the edges the user is the source of)."""
    asked = {relation for relation, pattern in _KIN_ASKED if pattern.search(query)}
    user = next((entity for entity in entities if entity.name == USER_NAME), None)
    if not asked or user is None:
        return []
    found = []
    for edge in store.graph_relations(scope, entity_ids=[user.id]):
        if edge.relation not in asked:
            continue
        if edge.source_id == user.id:
            found.append(edge.target_id)
        elif edge.relation in SYMMETRIC:
            found.append(edge.source_id)
    return found


def is_speaker(entity: Entity) -> bool:
    return entity.name == USER_NAME or bool(entity.metadata.get("speaker"))


def graph_hits(store: Store, scope: Scope, query: str, *, hops: int, max_relations: int) -> list[GraphHit]:
    """Walk from the entities the query names, except speakers (the user, or a transcript's named speakers):
    they are hubs, nearly every edge touches them, so a walk neither starts at one nor passes through one.
    What a user says about themselves is what the keyword and vector lists find; the graph adds the people
    and things around them. Measured on LoCoMo, where every question names a speaker: walking speakers
    (one hop) cost 0.04 recall@10 on multi-hop questions (bench/graph_bench.py)."""
    entities = store.graph_entities(scope)
    linked = link_entities(query, entities)
    kin = kin_of_user(store, scope, query, entities)
    if not linked and not kin:
        return []
    speakers = {entity.id for entity in entities if is_speaker(entity)}
    names = {entity.id: entity.name for entity in entities}
    others = list(dict.fromkeys([*kin, *(e.id for e in linked if e.id not in speakers)]))
    walked = [
        (relation, hop)
        for relation, hop in (store.graph_walk(scope, others, hops) if others else [])
        if hop == 1 or not {relation.source_id, relation.target_id} & speakers
    ]
    return _rank(walked, names, max_relations, relations_asked(query))


def _rank(
    walked: list[tuple[Relation, int]], names: dict[str, str], max_relations: int, asked: frozenset[str] | None
) -> list[GraphHit]:
    best: dict[str, tuple[Relation, int]] = {}
    for relation, hop in walked:
        if relation.id not in best or hop < best[relation.id][1]:
            best[relation.id] = (relation, hop)
    ordered = sorted(best.values(), key=lambda pair: (pair[1], -pair[0].confidence, -pair[0].valid_from.timestamp()))
    hits: dict[str, GraphHit] = {}
    for relation, hop in ordered[:max_relations]:
        label = f"{names.get(relation.source_id, '?')} {relation.relation} {names.get(relation.target_id, '?')}"
        for memory_id in relation.memory_ids:
            # past the first edge the walk already went the way the question asks ("李女士的丈夫" -> 王总 -> likes)
            on_topic = asked is None or hop > 1 or relation.relation in asked
            hits.setdefault(memory_id, GraphHit(memory_id, hop, label, on_topic))
    return list(hits.values())
