"""The SQLite store's graph tables: entity and relation rows, their writes, and the recursive walk."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.errors import ConflictError
from memstrata.graph.model import Entity, Relation
from memstrata.storage.graph_rows import (
    ENTITY_COLUMNS,
    RELATION_COLUMNS,
    Decoders,
    entity_from_row,
    prefixed,
    relation_from_row,
)
from memstrata.storage.protocol import Vector
from memstrata.storage.sqlite.rows import parse_ts, scope_columns, ts
from memstrata.storage.sqlite.where import Where, scope_where
from memstrata.types import Scope

_PREFIXED_RELATION_COLUMNS = prefixed(RELATION_COLUMNS, "r")
_DECODE = Decoders(json=json.loads, time=parse_ts)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def entity_to_row(entity: Entity) -> tuple[Any, ...]:
    return (
        entity.id,
        *scope_columns(entity.scope),
        entity.name,
        entity.type,
        _json(list(entity.aliases)),
        _json(list(entity.message_ids)),
        _json(entity.metadata),
        entity.merged_into,
        ts(entity.created_at),
        ts(entity.updated_at),
    )


def row_to_entity(row: Sequence[Any]) -> Entity:
    return entity_from_row(row, _DECODE)


def relation_to_row(relation: Relation) -> tuple[Any, ...]:
    return (
        relation.id,
        *scope_columns(relation.scope),
        relation.source_id,
        relation.relation,
        relation.target_id,
        relation.confidence,
        ts(relation.event_time),
        ts(relation.valid_from),
        ts(relation.valid_to),
        _json(list(relation.message_ids)),
        _json(list(relation.memory_ids)),
        _json(relation.metadata),
        ts(relation.created_at),
        ts(relation.updated_at),
    )


def row_to_relation(row: Sequence[Any]) -> Relation:
    return relation_from_row(row, _DECODE)


def _upsert(conn: sqlite3.Connection, table: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert, or replace the row with the same id *in the same scope*; an id owned by another scope is refused."""
    names = [column.strip() for column in columns.split(",")]
    updates = ", ".join(f"{name} = excluded.{name}" for name in names[5:] if name != "created_at")
    same_scope = " AND ".join(f"{table}.{name} = excluded.{name}" for name in names[1:5])
    marks = ", ".join("?" * len(names))
    sql = (
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT (id) DO UPDATE SET {updates} WHERE {same_scope}"
    )
    for row in rows:
        if conn.execute(sql, row).rowcount != 1:
            raise ConflictError(f"{table} id {row[0]} belongs to another scope")


def apply_graph(
    conn: sqlite3.Connection,
    entities: Sequence[Entity],
    vectors: Sequence[tuple[str, Vector]],
    relations: Sequence[Relation],
    embedding_id: str | None,
) -> None:
    _upsert(conn, "entities", ENTITY_COLUMNS, [entity_to_row(entity) for entity in entities])
    conn.executemany(
        "UPDATE entities SET embedding_id = ?, vector = ? WHERE id = ?",
        [
            (embedding_id, np.ascontiguousarray(vector, dtype=np.float32).tobytes(), entity_id)
            for entity_id, vector in vectors
        ],
    )
    _upsert(conn, "relations", RELATION_COLUMNS, [relation_to_row(relation) for relation in relations])


def _in(where: Where, column: str, values: Sequence[str]) -> None:
    where.add(f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values)))


def select_entities(conn: sqlite3.Connection, scope: Scope, entity_ids: Sequence[str] | None) -> list[Entity]:
    where = scope_where(scope, alias="e")
    if entity_ids is None:
        where.add("e.merged_into IS NULL")
    else:
        _in(where, "e.id", entity_ids)
    sql = f"SELECT {prefixed(ENTITY_COLUMNS, 'e')} FROM entities e WHERE {where.sql()} ORDER BY e.seq"
    rows = conn.execute(sql, where.params)
    return [row_to_entity(row) for row in rows]


def select_entity_vectors(conn: sqlite3.Connection, scope: Scope, embedding_id: str) -> dict[str, Vector]:
    where = scope_where(scope, alias="e")
    where.add("e.merged_into IS NULL AND e.embedding_id = ? AND e.vector IS NOT NULL", embedding_id)
    rows = conn.execute(f"SELECT e.id, e.vector FROM entities e WHERE {where.sql()}", where.params)
    return {entity_id: np.frombuffer(vector, dtype=np.float32) for entity_id, vector in rows}


def select_relations(
    conn: sqlite3.Connection,
    scope: Scope,
    entity_ids: Sequence[str] | None,
    relation_ids: Sequence[str] | None,
    include_closed: bool,
) -> list[Relation]:
    where = scope_where(scope, alias="r")
    if entity_ids is not None:
        marks = json.dumps(list(entity_ids))
        where.add(
            "(r.source_id IN (SELECT value FROM json_each(?)) OR r.target_id IN (SELECT value FROM json_each(?)))",
            marks,
            marks,
        )
    if relation_ids is not None:
        _in(where, "r.id", relation_ids)
    if not include_closed:
        where.add("r.valid_to IS NULL")
    sql = f"SELECT {_PREFIXED_RELATION_COLUMNS} FROM relations r WHERE {where.sql()} ORDER BY r.seq"
    return [row_to_relation(row) for row in conn.execute(sql, where.params)]


def walk(
    conn: sqlite3.Connection, scope: Scope, start_ids: Sequence[str], hops: int, include_closed: bool
) -> list[tuple[Relation, int]]:
    """Breadth-first over edges in both directions, in one recursive query; scope applies at every step."""
    edge_where = scope_where(scope, alias="r")
    if not include_closed:
        edge_where.add("r.valid_to IS NULL")
    # Each relation appears twice in `edges`, once per direction, so the walk can go either way.
    edges = (
        f"SELECT r.id AS rid, r.source_id AS here, r.target_id AS there FROM relations r WHERE {edge_where.sql()} "
        f"UNION ALL SELECT r.id, r.target_id, r.source_id FROM relations r WHERE {edge_where.sql()}"
    )
    sql = f"""
        WITH RECURSIVE
        edges(rid, here, there) AS ({edges}),
        reached(entity_id, depth) AS (
            SELECT value, 0 FROM json_each(?)
            UNION
            SELECT e.there, reached.depth + 1 FROM reached JOIN edges e ON e.here = reached.entity_id
            WHERE reached.depth + 1 < ?
        ),
        hit(rid, hop) AS (
            SELECT e.rid, MIN(reached.depth) + 1 FROM reached JOIN edges e ON e.here = reached.entity_id
            GROUP BY e.rid
        )
        SELECT {_PREFIXED_RELATION_COLUMNS}, hit.hop FROM hit JOIN relations r ON r.id = hit.rid
        ORDER BY hit.hop, r.confidence DESC, r.seq
    """
    params = [*edge_where.params, *edge_where.params, json.dumps(list(start_ids)), hops]
    return [(row_to_relation(row[:-1]), int(row[-1])) for row in conn.execute(sql, params)]
