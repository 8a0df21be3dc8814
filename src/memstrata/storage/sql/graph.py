"""Graph tables: entity and relation upserts, scoped reads, and the walk, hop by hop.

An id is replaced only within its own scope (``upsert.py``), and every read carries the scope in its own WHERE (in
the walk, at every step). Writes run inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import Vector
from memstrata.storage.sql import rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.rows import ENTITY_COLUMNS, RELATION_COLUMNS, prefixed
from memstrata.storage.sql.upsert import upsert_scoped
from memstrata.storage.sql.where import scope_where
from memstrata.types import Scope


def apply_graph(
    d: Dialect,
    tx: Tx,
    entities: Sequence[Entity],
    vectors: Sequence[tuple[str, Vector]],
    relations: Sequence[Relation],
    embedding_id: str | None,
) -> None:
    """The caller has checked ``embedding_id`` when there are vectors."""
    upsert_scoped(d, tx, "entities", ENTITY_COLUMNS, [rows.entity_params(d, entity) for entity in entities])
    if vectors:
        tx.executemany(
            "UPDATE entities SET embedding_id = ?, vector = ? WHERE id = ?",
            [(embedding_id, vector_bytes(vector), entity_id) for entity_id, vector in vectors],
        )
    upsert_scoped(d, tx, "relations", RELATION_COLUMNS, [rows.relation_params(d, relation) for relation in relations])


def vector_bytes(vector: Vector) -> bytes:
    """Entity name vectors and the embedding cache: float32 little-endian bytes, read whole, never searched."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def select_entities(d: Dialect, tx: Tx, scope: Scope, entity_ids: Sequence[str] | None) -> list[Entity]:
    where = scope_where(d, scope, "e", by_key=entity_ids is not None)
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
    where = scope_where(d, scope, "r", by_key=entity_ids is not None or relation_ids is not None)
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
    """Breadth-first over edges in both directions, one query per hop; scope applies at every step.

    Each hop asks for the relations touching the frontier at either end, which both databases answer from
    two indexes (``relations_source``, ``relations_target``). A recursive query needs a join that names the
    reached entities once, so it either joins a table of all the scope's edges (scanned and hashed at every
    hop: seconds at 300k edges) or joins on ``source OR target`` (planned as a scan per reached entity).
    A relation's hop is one more than the shallowest depth of its ends; ties go to confidence, then age.
    """
    where = scope_where(d, scope, "r", by_key=True)
    if not include_closed:
        where.add("r.valid_to IS NULL")
    found: dict[str, tuple[int, Sequence[Any]]] = {}
    seen, frontier = set(start_ids), list(dict.fromkeys(start_ids))
    for hop in range(1, hops + 1):
        if not frontier:
            break
        source, ids = d.in_("r.source_id", frontier)
        target, _ = d.in_("r.target_id", frontier)
        touching = tx.execute(
            f"SELECT r.seq, {prefixed(RELATION_COLUMNS, 'r')} FROM relations r WHERE ({source} OR {target}) "
            f"AND {where.sql()}",
            (*ids, *ids, *where.params),
        ).fetchall()
        frontier = []
        for row in touching:
            if row[1] not in found:
                found[row[1]] = (hop, row)
                ends = [end for end in (row[6], row[8]) if end not in seen]  # source_id, target_id
                seen.update(ends)
                frontier.extend(dict.fromkeys(ends))
    ordered = sorted(found.values(), key=lambda pair: (pair[0], -pair[1][9], pair[1][0]))  # hop, confidence, seq
    return [(rows.relation(d, tuple(row)[1:]), hop) for hop, row in ordered]
