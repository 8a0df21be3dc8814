"""Graph tables: entity and relation upserts, scoped reads, and the recursive walk.

An id is replaced only within its own scope, and every read carries the scope in its own WHERE (in
the walk, at every step). Writes run inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.errors import ConflictError
from memstrata.graph.model import Entity, Relation
from memstrata.storage.protocol import Vector
from memstrata.storage.sql import rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.rows import ENTITY_COLUMNS, RELATION_COLUMNS, SCOPE_COLUMNS, prefixed
from memstrata.storage.sql.where import scope_where
from memstrata.types import Scope


def _upsert(d: Dialect, tx: Tx, table: str, columns: str, params: Sequence[tuple[Any, ...]]) -> None:
    """Insert, or replace the row with the same id *in the same scope*. For an id owned by another scope the
    WHERE fails, nothing changes and the row counts 0."""
    if not params:
        return
    names = rows.names(columns)
    updates = ", ".join(f"{name} = excluded.{name}" for name in names[5:] if name != "created_at")
    same_scope = " AND ".join(f"{table}.{name} = excluded.{name}" for name in SCOPE_COLUMNS)
    sql = (
        f"INSERT INTO {table} ({columns}) VALUES ({rows.marks(len(names))}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates} WHERE {same_scope}"
    )
    if tx.executemany(sql, params).rowcount != len(params):
        condition, values = d.in_("id", [row[0] for row in params])
        stored = {row[0]: tuple(row[1:]) for row in tx.execute(
            f"SELECT id, {', '.join(SCOPE_COLUMNS)} FROM {table} WHERE {condition}", values).fetchall()}  # fmt: skip
        foreign = next((str(row[0]) for row in params if stored.get(row[0]) != tuple(row[1:5])), "?")
        raise ConflictError(f"{table} id {foreign} belongs to another scope")


def apply_graph(
    d: Dialect,
    tx: Tx,
    entities: Sequence[Entity],
    vectors: Sequence[tuple[str, Vector]],
    relations: Sequence[Relation],
    embedding_id: str | None,
) -> None:
    """The caller has checked ``embedding_id`` when there are vectors."""
    _upsert(d, tx, "entities", ENTITY_COLUMNS, [rows.entity_params(d, entity) for entity in entities])
    if vectors:
        tx.executemany(
            "UPDATE entities SET embedding_id = ?, vector = ? WHERE id = ?",
            [(embedding_id, vector_bytes(vector), entity_id) for entity_id, vector in vectors],
        )
    _upsert(d, tx, "relations", RELATION_COLUMNS, [rows.relation_params(d, relation) for relation in relations])


def vector_bytes(vector: Vector) -> bytes:
    """Entity name vectors and the embedding cache: float32 little-endian bytes, read whole, never searched."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def select_entities(d: Dialect, tx: Tx, scope: Scope, entity_ids: Sequence[str] | None) -> list[Entity]:
    where = scope_where(d, scope, "e")
    if entity_ids is None:
        where.add("e.merged_into IS NULL")
    else:
        where.add_sql(d.in_("e.id", list(entity_ids)))
    sql = f"SELECT {prefixed(ENTITY_COLUMNS, 'e')} FROM entities e WHERE {where.sql()} ORDER BY e.seq"
    return [rows.entity(d, row) for row in tx.execute(sql, where.params).fetchall()]


def select_relations(
    d: Dialect,
    tx: Tx,
    scope: Scope,
    entity_ids: Sequence[str] | None,
    relation_ids: Sequence[str] | None,
    include_closed: bool,
) -> list[Relation]:
    where = scope_where(d, scope, "r")
    if entity_ids is not None:
        source, params = d.in_("r.source_id", list(entity_ids))
        target, _ = d.in_("r.target_id", list(entity_ids))
        where.add(f"({source} OR {target})", *params, *params)
    if relation_ids is not None:
        where.add_sql(d.in_("r.id", list(relation_ids)))
    if not include_closed:
        where.add("r.valid_to IS NULL")
    sql = f"SELECT {prefixed(RELATION_COLUMNS, 'r')} FROM relations r WHERE {where.sql()} ORDER BY r.seq"
    return [rows.relation(d, row) for row in tx.execute(sql, where.params).fetchall()]


def walk(
    d: Dialect, tx: Tx, scope: Scope, start_ids: Sequence[str], hops: int, include_closed: bool
) -> list[tuple[Relation, int]]:
    """Breadth-first over edges in both directions, in one recursive query; scope applies at every step.

    ``reached`` holds (entity, depth) pairs below ``hops``; UNION drops repeats, so cycles end. Each step
    joins the relations touching an entity at either end (one index per end, ``relations_source`` and
    ``relations_target``), never a table of all the scope's edges: PostgreSQL would scan and hash the whole
    edge set at every hop. A relation's hop is one more than the shallowest depth it is reached from.
    """
    where = scope_where(d, scope, "r")
    if not include_closed:
        where.add("r.valid_to IS NULL")
    touching = f"relations r ON (r.source_id = reached.entity_id OR r.target_id = reached.entity_id) AND {where.sql()}"
    starts = " UNION ".join(["SELECT ? AS id"] * len(start_ids))
    sql = f"""
        WITH RECURSIVE
        reached(entity_id, depth) AS (
            SELECT starts.id, 0 FROM ({starts}) AS starts
            UNION
            SELECT CASE WHEN r.source_id = reached.entity_id THEN r.target_id ELSE r.source_id END, reached.depth + 1
            FROM reached JOIN {touching} WHERE reached.depth + 1 < ?
        ),
        hit(rid, hop) AS (SELECT r.id, MIN(reached.depth) + 1 FROM reached JOIN {touching} GROUP BY r.id)
        SELECT {prefixed(RELATION_COLUMNS, "r")}, hit.hop FROM hit JOIN relations r ON r.id = hit.rid
        ORDER BY hit.hop, r.confidence DESC, r.seq
    """
    params = [*start_ids, *where.params, hops, *where.params]
    return [(rows.relation(d, tuple(row)[:-1]), int(row[-1])) for row in tx.execute(sql, params).fetchall()]
