"""The graph as callers see it: ``memory.graph.neighbors("王总", user_id=...)`` and friends.

Every call is scoped like the rest of the API; entities are named by id, name or alias.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Literal

from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.graph.names import USER_NAME, is_user, normalize
from memstrata.graph.retrieve import link_entities
from memstrata.graph.subgraph import Edge, Subgraph
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import HistoryAction, HistoryEvent, Scope, new_id

ScopeFor = Callable[[str | None, str | None, str | None], Scope]
ExportFormat = Literal["json", "graphml", "mermaid"]


class GraphView:
    def __init__(self, store: Store, scope_for: ScopeFor, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._scope_for = scope_for
        self._clock = clock

    # --- reading --------------------------------------------------------------------------
    def entities(
        self, *, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None
    ) -> list[Entity]:
        return self._store.graph_entities(self._scope_for(user_id, agent_id, session_id))

    def entity(
        self, name: str, *, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None
    ) -> Entity:
        """An entity by id, name or alias ("字节" finds "字节跳动")."""
        return self._find(self._scope_for(user_id, agent_id, session_id), name)

    def linked(
        self, text: str, *, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None
    ) -> list[Entity]:
        """The entities a piece of text names: what search links a query to."""
        return link_entities(text, self.entities(user_id=user_id, agent_id=agent_id, session_id=session_id))

    def neighbors(
        self,
        entity: str,
        *,
        hops: int = 1,
        include_closed: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> Subgraph:
        """The relations within ``hops`` of an entity (walked in SQL), with every entity they touch."""
        if not 1 <= hops <= 6:
            raise InvalidInputError("hops must be between 1 and 6")
        scope = self._scope_for(user_id, agent_id, session_id)
        start = self._find(scope, entity)
        relations = [r for r, _ in self._store.graph_walk(scope, [start.id], hops, include_closed=include_closed)]
        return self._with_entities(scope, relations, extra=[start])

    def path(
        self,
        source: str,
        target: str,
        *,
        max_hops: int = 4,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[Edge] | None:
        """The shortest chain of current relations between two entities (either direction), or None."""
        if not 1 <= max_hops <= 6:
            raise InvalidInputError("max_hops must be between 1 and 6")
        scope = self._scope_for(user_id, agent_id, session_id)
        start, goal = self._find(scope, source), self._find(scope, target)
        if start.id == goal.id:
            return []
        walked = [relation for relation, _ in self._store.graph_walk(scope, [start.id], max_hops)]
        chain = _shortest(walked, start.id, goal.id)
        if chain is None:
            return None
        return self._with_entities(scope, chain, extra=[start, goal]).edges()

    def subgraph(
        self,
        *,
        include_closed: bool = False,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> Subgraph:
        scope = self._scope_for(user_id, agent_id, session_id)
        relations = self._store.graph_relations(scope, include_closed=include_closed)
        return Subgraph(self._store.graph_entities(scope), relations)

    def relation_history(
        self,
        entity: str,
        relation: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[Edge]:
        """Every relation of an entity, current and closed, oldest first: "where did I live before?"."""
        scope = self._scope_for(user_id, agent_id, session_id)
        found = self._find(scope, entity)
        relations = self._store.graph_relations(scope, entity_ids=[found.id], include_closed=True)
        chosen = [r for r in relations if relation is None or r.relation == relation]
        chosen.sort(key=lambda r: (r.valid_from, r.created_at))
        return self._with_entities(scope, chosen, extra=[found]).edges()

    def history(
        self,
        record_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> list[HistoryEvent]:
        """The ADD / MERGE / CLOSE events of one entity or relation."""
        scope = self._scope_for(user_id, agent_id, session_id)
        events = self._store.history(scope, record_id)
        if not events:
            raise NotFoundError(f"no graph history for {record_id} in scope {scope.label()}")
        return events

    def export(
        self,
        fmt: ExportFormat = "json",
        *,
        include_closed: bool = True,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> str:
        graph = self.subgraph(include_closed=include_closed, user_id=user_id, agent_id=agent_id, session_id=session_id)
        if fmt == "json":
            return graph.to_json()
        if fmt == "graphml":
            return graph.to_graphml()
        if fmt == "mermaid":
            return graph.to_mermaid()
        raise InvalidInputError(f"unknown graph export format {fmt!r}; use json, graphml or mermaid")

    # --- editing (a person's corrections) ---------------------------------------------------
    def merge(
        self,
        keep: str,
        duplicate: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        actor: str = "api",
    ) -> Entity:
        """Merge ``duplicate`` into ``keep``: its names become aliases, its relations move over, it is
        kept (``merged_into``) so old references still resolve. One transaction."""
        scope = self._scope_for(user_id, agent_id, session_id)
        kept, gone = self._find(scope, keep), self._find(scope, duplicate)
        if kept.id == gone.id:
            raise InvalidInputError(f"{keep!r} and {duplicate!r} are the same entity")
        if kept.scope != gone.scope:
            raise InvalidInputError("entities of different scopes cannot be merged")
        now = self._clock()
        known = {normalize(n) for n in kept.names()}
        aliases = (*kept.aliases, *(n for n in gone.names() if normalize(n) not in known))
        merged = kept.model_copy(
            update={
                "aliases": tuple(dict.fromkeys(aliases)),
                "message_ids": tuple(dict.fromkeys((*kept.message_ids, *gone.message_ids))),
                "updated_at": now,
            }
        )
        moved = [
            r.model_copy(update={
                "source_id": kept.id if r.source_id == gone.id else r.source_id,
                "target_id": kept.id if r.target_id == gone.id else r.target_id,
                "updated_at": now,
            })
            for r in self._store.graph_relations(kept.scope, entity_ids=[gone.id], include_closed=True)
        ]  # fmt: skip
        # An edge between the two would become a loop on one node: it stops being true, and stays as history.
        moved = [
            r.model_copy(update={"valid_to": r.valid_to or now}) if r.source_id == r.target_id else r for r in moved
        ]
        event = HistoryEvent(
            id=new_id(), memory_id=kept.id, scope=kept.scope, action=HistoryAction.MERGE, old_text=gone.name,
            new_text=merged.name, actor=actor, reason=f"merged {gone.id} into {kept.id}", created_at=now,
            details={"graph": "entity", "merged": gone.id},
        )  # fmt: skip
        tombstone = gone.model_copy(update={"merged_into": kept.id, "updated_at": now})
        self._store.write(WriteBatch(entities=[merged, tombstone], relations=moved, history=[event]))
        return merged

    # --- helpers --------------------------------------------------------------------------
    def _find(self, scope: Scope, name: str) -> Entity:
        by_id = self._store.graph_entities(scope, [name])
        if by_id:
            found = by_id[0]
            return self._find(scope, found.merged_into) if found.merged_into else found
        wanted = normalize(USER_NAME if is_user(name) else name)  # "我" / "I" name the user node
        for entity in self._store.graph_entities(scope):
            if wanted in {normalize(n) for n in entity.names()}:
                return entity
        raise NotFoundError(f"no entity named {name!r} in scope {scope.label()}; list them with graph entities")

    def _with_entities(self, scope: Scope, relations: list[Relation], extra: list[Entity]) -> Subgraph:
        wanted = {end for r in relations for end in (r.source_id, r.target_id)} - {e.id for e in extra}
        entities = {e.id: e for e in [*extra, *self._store.graph_entities(scope, sorted(wanted))]}
        return Subgraph(list(entities.values()), relations)


def _shortest(relations: list[Relation], start: str, goal: str) -> list[Relation] | None:
    """Breadth-first over the walked edges, both directions."""
    around: dict[str, list[tuple[Relation, str]]] = {}
    for relation in relations:
        around.setdefault(relation.source_id, []).append((relation, relation.target_id))
        around.setdefault(relation.target_id, []).append((relation, relation.source_id))
    came_from: dict[str, tuple[str, Relation] | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == goal:
            chain = []
            step = came_from[here]
            while step is not None:
                previous, relation = step
                chain.append(relation)
                step = came_from[previous]
            return chain[::-1]
        for relation, there in around.get(here, []):
            if there not in came_from:
                came_from[there] = (here, relation)
                queue.append(there)
    return None
