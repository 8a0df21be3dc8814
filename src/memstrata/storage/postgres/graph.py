"""The PostgreSQL store's graph tables: entity and relation upserts, scoped reads, and the recursive walk.

Functions over a connection; writes run inside the caller's transaction. Same semantics as the
SQLite store's ``graph.py``: an id is replaced only within its own scope, and every read carries
the scope in its own WHERE (in the walk, at every step).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from memstrata.errors import ConflictError
from memstrata.graph.model import Entity, Relation
from memstrata.storage.graph_rows import ENTITY_COLUMNS, RELATION_COLUMNS, prefixed
from memstrata.storage.postgres.rows import (
    entity_params,
    relation_params,
    row_to_entity,
    row_to_relation,
)
from memstrata.storage.postgres.where import scope_where
from memstrata.storage.protocol import Vector
from memstrata.types import Scope

Conn = psycopg.Connection[Any]


def _names(columns: str) -> list[str]:
    return [column.strip() for column in columns.split(",")]


_SCOPE_COLUMNS = ("tenant_id", "user_id", "agent_id", "session_id")  # columns 1-4 of both tables


def vector_blob(vector: Vector) -> bytes:
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def _upsert_sql(table: str, columns: str) -> str:
    """Insert, or replace the row with the same id *in the same scope*. For an id owned by another
    scope the WHERE fails, nothing changes and the statement reports 0 rows."""
    names = _names(columns)
    updates = ", ".join(f"{name} = EXCLUDED.{name}" for name in names[5:] if name != "created_at")
    same_scope = " AND ".join(f"{table}.{name} = EXCLUDED.{name}" for name in _SCOPE_COLUMNS)
    marks = ", ".join(["%s"] * len(names))
    return (
        f"INSERT INTO {table} ({columns}) VALUES ({marks}) ON CONFLICT (id) DO UPDATE SET {updates} WHERE {same_scope}"
    )


def _upsert(conn: Conn, table: str, columns: str, rows: Sequence[tuple[Any, ...]]) -> None:
    if not rows:
        return
    with conn.cursor() as cur:
        cur.executemany(_upsert_sql(table, columns), rows)  # rowcount: the sum over all rows
        if cur.rowcount != len(rows):
            raise ConflictError(f"{table} id {_foreign_id(cur, table, rows)} belongs to another scope")


def _foreign_id(cur: psycopg.Cursor[Any], table: str, rows: Sequence[tuple[Any, ...]]) -> str:
    """The first id of ``rows`` stored under another scope (the caller's transaction is then aborted)."""
    stored = {
        row[0]: tuple(row[1:])
        for row in cur.execute(
            f"SELECT id, {', '.join(_SCOPE_COLUMNS)} FROM {table} WHERE id = ANY(%s)", ([row[0] for row in rows],)
        ).fetchall()
    }
    return next((str(row[0]) for row in rows if stored.get(row[0]) != tuple(row[1:5])), "?")


def apply_graph(
    conn: Conn,
    entities: Sequence[Entity],
    vectors: Sequence[tuple[str, Vector]],
    relations: Sequence[Relation],
    embedding_id: str | None,
) -> None:
    """Inside the caller's transaction; the caller has checked ``embedding_id`` when there are vectors."""
    _upsert(conn, "entities", ENTITY_COLUMNS, [entity_params(entity) for entity in entities])
    if vectors:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE entities SET embedding_id = %s, vector = %s WHERE id = %s",
                [(embedding_id, vector_blob(vector), entity_id) for entity_id, vector in vectors],
            )
    _upsert(conn, "relations", RELATION_COLUMNS, [relation_params(relation) for relation in relations])


def select_entities(conn: Conn, scope: Scope, entity_ids: Sequence[str] | None) -> list[Entity]:
    where = scope_where(scope, alias="e")
    if entity_ids is None:
        where.add("e.merged_into IS NULL")
    else:
        where.add("e.id = ANY(%s)", list(entity_ids))
    rows = conn.execute(
        f"SELECT {prefixed(ENTITY_COLUMNS, 'e')} FROM entities e WHERE {where.sql()} ORDER BY e.seq", where.params
    ).fetchall()
    return [row_to_entity(tuple(row)) for row in rows]


def select_entity_vectors(conn: Conn, scope: Scope, embedding_id: str) -> dict[str, Vector]:
    where = scope_where(scope, alias="e")
    where.add("e.merged_into IS NULL AND e.embedding_id = %s AND e.vector IS NOT NULL", embedding_id)
    rows = conn.execute(f"SELECT e.id, e.vector FROM entities e WHERE {where.sql()} ORDER BY e.seq", where.params)
    return {entity_id: np.frombuffer(blob, dtype="<f4").astype(np.float32) for entity_id, blob in rows}


def select_relations(
    conn: Conn,
    scope: Scope,
    entity_ids: Sequence[str] | None,
    relation_ids: Sequence[str] | None,
    include_closed: bool,
) -> list[Relation]:
    where = scope_where(scope, alias="r")
    if entity_ids is not None:
        ids = list(entity_ids)
        where.add("(r.source_id = ANY(%s) OR r.target_id = ANY(%s))", ids, ids)
    if relation_ids is not None:
        where.add("r.id = ANY(%s)", list(relation_ids))
    if not include_closed:
        where.add("r.valid_to IS NULL")
    rows = conn.execute(
        f"SELECT {prefixed(RELATION_COLUMNS, 'r')} FROM relations r WHERE {where.sql()} ORDER BY r.seq",
        where.params,
    ).fetchall()
    return [row_to_relation(tuple(row)) for row in rows]


def _neighbours_sql(scope: Scope, include_closed: bool) -> tuple[str, list[Any]]:
    """The visible edges at ``reached.entity_id``, either way round, as (rid, there): a LATERAL subquery
    with one index scan per direction (source_id, target_id)."""
    where = scope_where(scope, alias="r")
    if not include_closed:
        where.add("r.valid_to IS NULL")
    sql = (
        "SELECT r.id AS rid, r.target_id AS there FROM relations r "
        f"WHERE r.source_id = reached.entity_id AND {where.sql()} "
        "UNION ALL SELECT r.id, r.source_id FROM relations r "
        f"WHERE r.target_id = reached.entity_id AND {where.sql()}"
    )
    return sql, [*where.params, *where.params]


def walk(
    conn: Conn, scope: Scope, start_ids: Sequence[str], hops: int, include_closed: bool
) -> list[tuple[Relation, int]]:
    """Breadth-first over edges in both directions, in one recursive query; scope applies at every step.

    ``reached`` holds (entity, depth) pairs below ``hops``; UNION drops repeats, so cycles end. The
    recursive term must name ``reached`` once, so both directions sit in one LATERAL subquery keyed on
    it: joining a CTE of all edges instead made PostgreSQL scan and hash the scope's whole edge set at
    every hop (seconds at 300k edges), where the lateral form stays on the indexes. A relation's hop is
    one more than the shallowest depth it is reached from.
    """
    neighbours, params = _neighbours_sql(scope, include_closed)
    sql = f"""
        WITH RECURSIVE
        reached(entity_id, depth) AS (
            SELECT start_id, 0 FROM unnest(%s::text[]) AS start_id
            UNION
            SELECT e.there, reached.depth + 1 FROM reached CROSS JOIN LATERAL ({neighbours}) e
            WHERE reached.depth + 1 < %s
        ),
        hit(rid, hop) AS (
            SELECT e.rid, MIN(reached.depth) + 1 FROM reached CROSS JOIN LATERAL ({neighbours}) e GROUP BY e.rid
        )
        SELECT {prefixed(RELATION_COLUMNS, "r")}, hit.hop FROM hit JOIN relations r ON r.id = hit.rid
        ORDER BY hit.hop, r.confidence DESC, r.seq
    """
    rows = conn.execute(sql, [list(start_ids), *params, hops, *params]).fetchall()
    return [(row_to_relation(tuple(row)[:-1]), int(row[-1])) for row in rows]
