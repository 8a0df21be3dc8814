"""Graph writes for one batch of extracted triples: resolve both ends, then add, reinforce or close edges.

A relation that contradicts a current one is not a delete: a functional relation (lives_in, works_at ...)
with a new value, or a turn that says the old one ended, closes the old edge (``valid_to``) and writes a
CLOSE event, so "where did I live before?" still has an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from memstrata.graph.extracted import Mention, Triple
from memstrata.graph.names import normalize, type_from_name
from memstrata.graph.resolve import EmbedNames, EntityResolver
from memstrata.graph.vocabulary import END_TYPES, FUNCTIONAL, SYMMETRIC
from memstrata.patterns import lazy_pattern
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import Store, Vector
from memstrata.types import HistoryAction, HistoryEvent, Scope, as_utc, new_id

LinkMemories = Callable[[Triple, Entity, Entity], tuple[str, ...]]


@dataclass
class GraphPlan:
    entities: list[Entity] = field(default_factory=list)
    entity_vectors: list[tuple[str, Vector]] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    summary: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphContext:
    store: Store
    scope: Scope
    embed: EmbedNames
    embedding_id: str
    threshold: float
    now: datetime
    actor: str
    link: LinkMemories
    turn_times: dict[str, datetime]


def end_types(triple: Triple) -> tuple[str, str]:
    """The relation's usual types win over name cues (a 产品经理 in has_profession is a profession)."""
    usual_source, usual_target = END_TYPES.get(triple.relation, (None, None))
    return usual_source or triple.source.type or "thing", usual_target or triple.target.type or "thing"


# Types a name cannot share: an end plainly of one of them cannot fill a relation's end of another.
_DISTINCT_TYPES = frozenset({"person", "organization", "location", "profession"})
# Some mismatches are another relation, not a mistake: working "at" a place is working in it.
# "我在杭州工作" is a place of work, not an employer; "Tom left Google" is a job left, not a home ("left" ends either,
# and the rules read it as a move out first: a user trial's ending was refused and the works_at edge stayed open).
_RELATION_FOR_TARGET = {("works_at", "location"): "works_in", ("lives_in", "organization"): "works_at"}


def _type_said(mention: Mention, known: Mapping[str, set[str]]) -> str | None:
    """What the mention plainly is, most credible first: the node already of that name, the name's own cues
    (公司, 市, 经理), the extractor's type; None when none of them names one of the distinct types."""
    nodes = known.get(normalize(mention.name), set()) & _DISTINCT_TYPES
    if len(nodes) == 1:
        return next(iter(nodes))
    for kind in (type_from_name(mention.name), mention.type):
        if kind in _DISTINCT_TYPES:
            return kind
    return None


def _clash(said: str | None, usual: str | None) -> bool:
    """Whether an end said to be ``said`` cannot be the ``usual`` type of its relation. A person and a
    profession blur: name cues read 经理 as a person (王经理), and 产品经理 is also a profession."""
    if said is None or usual not in _DISTINCT_TYPES or said == usual:
        return False
    return {said, usual} != {"person", "profession"}


def fitting_triples(triples: Sequence[Triple], entities: Sequence[Entity]) -> tuple[list[Triple], int]:
    """The triples whose ends can be what their relation takes, and how many could not. A model read
    "下周三我要去 Shanghai 参加 KubeCon" as ``user works_at 上海`` and "在阿里巴巴做产品经理" as ``works_at 产品经理``;
    applied, they closed the true works_at edge. ``works_at`` a place becomes ``works_in`` it."""
    known: dict[str, set[str]] = {}
    for entity in entities:
        for name in entity.names():
            known.setdefault(normalize(name), set()).add(entity.type)
    kept, refused = [], 0
    for triple in triples:
        usual_source, usual_target = END_TYPES.get(triple.relation, (None, None))
        source_type, target_type = _type_said(triple.source, known), _type_said(triple.target, known)
        if _clash(target_type, usual_target):
            renamed = _RELATION_FOR_TARGET.get((triple.relation, str(target_type)))
            if renamed is None:
                refused += 1
                continue
            triple = replace(triple, relation=renamed)
        if _clash(source_type, usual_source):
            refused += 1
            continue
        kept.append(triple)
    return kept, refused


def plan_graph(ctx: GraphContext, triples: Sequence[Triple]) -> GraphPlan:
    if not triples:
        return GraphPlan()
    # Reads match every narrower scope too (a user's scope sees its agents'); a write resolves and links
    # only within its own exact scope, so it never edits another agent's nodes.
    own = {entity.id: entity for entity in ctx.store.graph_entities(ctx.scope) if entity.scope == ctx.scope}
    triples, refused = fitting_triples(triples, list(own.values()))
    vectors = ctx.store.entity_vectors(ctx.scope, ctx.embedding_id)
    resolver = EntityResolver(
        scope=ctx.scope,
        entities=own,
        vectors={entity_id: vector for entity_id, vector in vectors.items() if entity_id in own},
        embed=ctx.embed,
        threshold=ctx.threshold,
        now=ctx.now,
        actor=ctx.actor,
    )
    ordered = sorted(triples, key=lambda t: moment_of(ctx, t))  # valid-time order, not processing order
    ends = []
    for triple in ordered:
        source_type, target_type = end_types(triple)
        source = resolver.resolve(triple.source.name, source_type, triple.message_ids, speaker=triple.source.speaker)
        target = resolver.resolve(triple.target.name, target_type, triple.message_ids, speaker=triple.target.speaker)
        ends.append((triple, source.id, target.id))
    edges = _Edges(ctx, resolver)
    for triple, source_id, target_id in ends:
        if source_id != target_id:
            edges.apply(triple, resolver.entities[source_id], resolver.entities[target_id])
    return GraphPlan(
        entities=resolver.written_entities(),
        entity_vectors=resolver.written_vectors(),
        relations=edges.written(),
        history=resolver.history + edges.history,
        summary={
            "entities_added": resolver.added,
            "aliases_added": resolver.aliased,
            "relations_added": edges.added,
            "relations_reinforced": edges.reinforced,
            "relations_closed": edges.closed,
            "triples_refused": refused,  # an end plainly of another type than the relation takes
            "triples_from_rules": sum(1 for t in triples if t.origin == "rules"),
            "triples_from_model": sum(1 for t in triples if t.origin != "rules"),
        },
    )


def moment_of(ctx: GraphContext, triple: Triple) -> datetime:
    """When the relation became true: the date the turn gives for it, else when the turn was said."""
    if triple.event_time:
        try:
            return as_utc(datetime.fromisoformat(triple.event_time))
        except (ValueError, OverflowError):
            pass  # an unparseable date from a model: fall back to when it was said
    times = [ctx.turn_times[m] for m in triple.message_ids if m in ctx.turn_times]
    return min(times) if times else ctx.now


_FINER = lazy_pattern(r"(?:区|县|镇|乡|街道|路|district|county)$")  # a place inside a city


class _Edges:
    """The current edges around the resolved entities, changed in place as triples arrive in turn order."""

    def __init__(self, ctx: GraphContext, resolver: EntityResolver) -> None:
        self.ctx = ctx
        self.resolver = resolver
        known = [e for e in resolver.entities if e not in resolver.created]
        around = ctx.store.graph_relations(ctx.scope, entity_ids=known) if known else []
        self.current = {r.id: r for r in around if r.scope == ctx.scope}
        self.changed: set[str] = set()
        self.history: list[HistoryEvent] = []
        self.added = self.reinforced = self.closed = 0
        self._added_here: set[str] = set()

    def apply(self, triple: Triple, source: Entity, target: Entity) -> None:
        moment = self._moment(triple)
        same = self._same(source.id, triple.relation, target.id)
        if triple.ended:
            for edge in same:
                self._close(edge, moment, f"the turn says it ended: {self._label(edge)}")
            return
        if same:
            for edge in same:
                self._reinforce(edge, triple, source, target)
            return
        if triple.relation in FUNCTIONAL:
            others = self._others(source.id, triple.relation, target.id)
            newer = [edge for edge in others if edge.valid_from > moment]
            if newer:  # an older chat imported after a newer one: this value was true before, until the newer one
                added = self._add(triple, source, target, moment)
                self._close(added, min(edge.valid_from for edge in newer), "older than the current value")
                return
            for edge in others:
                if self._said_together(edge, triple, moment, target):
                    continue
                self._close(edge, moment, f"replaced by {source.name} {triple.relation} {target.name}")
        self._add(triple, source, target, moment)

    def _said_together(self, edge: Relation, triple: Triple, moment: datetime, target: Entity) -> bool:
        """A place and a finer place inside it, said in one turn, hold together ("我搬到上海了，现在住在静安区": the
        district closed the city the moment both opened, so the graph said the user no longer lived in Shanghai).
        Two spellings of one place ("朝阳区" beside "北京市朝阳区") or two places of one level ("从北京搬到了上海")
        stay one current value, the later."""
        if not (
            edge.id in self._added_here
            and edge.valid_from == moment
            and bool(set(edge.message_ids) & set(triple.message_ids))
        ):
            return False
        known = self.resolver.entities.get(edge.target_id)
        if known is None:
            return False
        earlier, later = normalize(known.name), normalize(target.name)
        finer = _FINER.search(later) is not None and _FINER.search(earlier) is None
        return finer and earlier not in later and later not in earlier

    def _moment(self, triple: Triple) -> datetime:
        return moment_of(self.ctx, triple)

    def _same(self, source_id: str, relation: str, target_id: str) -> list[Relation]:
        pairs = {(source_id, target_id)} | ({(target_id, source_id)} if relation in SYMMETRIC else set())
        return [
            r for r in self.current.values()
            if r.valid_to is None and r.relation == relation and (r.source_id, r.target_id) in pairs
        ]  # fmt: skip

    def _others(self, source_id: str, relation: str, target_id: str) -> list[Relation]:
        """Current edges of a functional relation from the same subject (either end, if symmetric)."""
        found = []
        for r in self.current.values():
            if r.valid_to is not None or r.relation != relation:
                continue
            ends = {r.source_id, r.target_id} if relation in SYMMETRIC else {r.source_id}
            if source_id in ends and target_id not in {r.source_id, r.target_id}:
                found.append(r)
        return found

    def _add(self, triple: Triple, source: Entity, target: Entity, moment: datetime) -> Relation:
        relation = Relation(
            id=new_id(), scope=self.ctx.scope, source_id=source.id, relation=triple.relation, target_id=target.id,
            confidence=triple.confidence, event_time=moment if triple.event_time else None, valid_from=moment,
            message_ids=triple.message_ids, memory_ids=self.ctx.link(triple, source, target),
            metadata={"origin": triple.origin}, created_at=self.ctx.now, updated_at=self.ctx.now,
        )  # fmt: skip
        self.current[relation.id] = relation
        self.changed.add(relation.id)
        self._added_here.add(relation.id)
        self.added += 1
        self._event(relation, HistoryAction.ADD, None, self._label(relation), f"extracted by {triple.origin}")
        return relation

    def _reinforce(self, edge: Relation, triple: Triple, source: Entity, target: Entity) -> None:
        """Said again: more sources, more memories to show, a little more confidence. No history event."""
        updated = edge.model_copy(
            update={
                "message_ids": tuple(dict.fromkeys((*edge.message_ids, *triple.message_ids))),
                "memory_ids": tuple(dict.fromkeys((*edge.memory_ids, *self.ctx.link(triple, source, target)))),
                "confidence": min(1.0, max(edge.confidence, triple.confidence) + 0.1),
                "updated_at": self.ctx.now,
            }
        )
        self.current[edge.id] = updated
        self.changed.add(edge.id)
        self.reinforced += 1

    def _close(self, edge: Relation, moment: datetime, reason: str) -> None:
        valid_to = max(moment, edge.valid_from)
        self.current[edge.id] = edge.model_copy(update={"valid_to": valid_to, "updated_at": self.ctx.now})
        self.changed.add(edge.id)
        self.closed += 1
        self._event(edge, HistoryAction.CLOSE, self._label(edge), None, reason)

    def _label(self, relation: Relation) -> str:
        names = self.resolver.entities
        source = names[relation.source_id].name if relation.source_id in names else relation.source_id
        target = names[relation.target_id].name if relation.target_id in names else relation.target_id
        return f"{source} {relation.relation} {target}"

    def _event(self, relation: Relation, action: HistoryAction, old: str | None, new: str | None, why: str) -> None:
        self.history.append(
            HistoryEvent(
                id=new_id(), memory_id=relation.id, scope=self.ctx.scope, action=action, old_text=old,
                new_text=new, actor=self.ctx.actor, reason=why, created_at=self.ctx.now, details={"graph": "relation"},
            )
        )  # fmt: skip

    def written(self) -> list[Relation]:
        return [self.current[relation_id] for relation_id in sorted(self.changed)]
