"""REST endpoints for graph memory: entities, neighbourhoods, paths, relation history, exports.
Same pattern as ``routes.py``: the key's scopes are checked, then the Memory facade is called."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from memstrata.api.models import NO_NUL, TEXT_PATTERN
from memstrata.api.routes import ERRORS, CallerDep, ScopeDep
from memstrata.graph.subgraph import Edge, Subgraph
from memstrata.records.graph import Entity, Relation

router = APIRouter(prefix="/v1/graph", responses=ERRORS, tags=["graph"])
EntityName = Annotated[
    str, Query(min_length=1, max_length=200, pattern=TEXT_PATTERN, description="entity id, name or alias")
]
EXPORT_MEDIA = {"json": "application/json", "graphml": "application/xml", "mermaid": "text/plain"}


class GraphOut(BaseModel):
    entities: list[Entity]
    relations: list[Relation]

    @classmethod
    def of(cls, graph: Subgraph) -> GraphOut:
        return cls(entities=graph.entities, relations=graph.relations)


class EdgeOut(BaseModel):
    source: str
    relation: str
    target: str
    record: Relation

    @classmethod
    def of(cls, edge: Edge) -> EdgeOut:
        return cls(source=edge.source, relation=edge.relation, target=edge.target, record=edge.record)


@router.get("/entities", response_model=list[Entity])
def entities(call: CallerDep, ids: ScopeDep) -> list[Entity]:
    return call.memory.graph.entities(**call.scope(ids))


@router.get("/neighbors", response_model=GraphOut)
def neighbors(
    entity: EntityName,
    call: CallerDep,
    ids: ScopeDep,
    hops: Annotated[int, Query(ge=1, le=6)] = 1,
    include_closed: bool = False,
) -> GraphOut:
    """The relations within ``hops`` of an entity, with the entities they touch."""
    return GraphOut.of(call.memory.graph.neighbors(entity, hops=hops, include_closed=include_closed, **call.scope(ids)))


@router.get("/path", response_model=list[EdgeOut] | None)
def path(
    source: EntityName,
    target: EntityName,
    call: CallerDep,
    ids: ScopeDep,
    max_hops: Annotated[int, Query(ge=1, le=6)] = 4,
) -> list[EdgeOut] | None:
    """The shortest chain of current relations between two entities; null when there is none."""
    chain = call.memory.graph.path(source, target, max_hops=max_hops, **call.scope(ids))
    return None if chain is None else [EdgeOut.of(edge) for edge in chain]


@router.get("/relations", response_model=list[EdgeOut])
def relations(
    entity: EntityName,
    call: CallerDep,
    ids: ScopeDep,
    relation: Annotated[str | None, Query(max_length=64, pattern=NO_NUL)] = None,
) -> list[EdgeOut]:
    """Every relation of an entity, current and closed, oldest first."""
    return [EdgeOut.of(edge) for edge in call.memory.graph.relation_history(entity, relation, **call.scope(ids))]


@router.get(
    "/export",
    response_class=Response,
    responses={200: {"description": "the graph in the asked format", "content": {
        "application/json": {"schema": {"type": "object"}},
        "application/xml": {"schema": {"type": "string"}},
        "text/plain": {"schema": {"type": "string"}},
    }}},
)  # fmt: skip
def export(
    call: CallerDep, ids: ScopeDep, format: Literal["json", "graphml", "mermaid"] = "json", include_closed: bool = True
) -> Response:
    """The scope's graph as JSON (application/json), GraphML (application/xml) or a Mermaid flowchart
    (text/plain)."""
    text = call.memory.graph.export(format, include_closed=include_closed, **call.scope(ids))
    return Response(text, media_type=EXPORT_MEDIA[format])
