"""Keyword (tsvector) and dense (pgvector HNSW) retrieval, with scope and filters in the same WHERE."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from memstrata.query import Filters
from memstrata.storage.postgres.migrations import HNSW_MAX_DIMS, vector_expression
from memstrata.storage.postgres.rows import tsquery_literal
from memstrata.storage.postgres.where import memory_where
from memstrata.storage.protocol import ScoredId, Vector
from memstrata.types import Scope

Conn = psycopg.Connection[Any]


def keyword_search(conn: Conn, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
    """Memories holding any of the tokens, ranked by cover density (higher is better).

    The tokens are the ones SQLite's FTS5 gets; each is quoted into the tsquery, so user text
    never acts as query syntax. Normalisation 1 divides by 1 + log(length), like BM25's length
    penalty.
    """
    query = tsquery_literal(list(dict.fromkeys(tokens)))
    if not query:
        return []
    where = memory_where(scope, filters)
    rows = conn.execute(
        "SELECT m.id, ts_rank_cd(m.tokens, %s::tsquery, 1) AS rank FROM memories m "
        f"WHERE m.tokens @@ %s::tsquery AND {where.sql()} ORDER BY rank DESC, m.seq LIMIT %s",
        (query, query, *where.params, limit),
    ).fetchall()
    return [ScoredId(memory_id, float(rank)) for memory_id, rank in rows]


def vector_search(conn: Conn, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
    """Top ``limit`` memories by cosine similarity (1 - cosine distance), best first.

    Only vectors of the store's current embedding model are searched. The first query is written
    so the planner may use the HNSW index (iterative scans keep going until enough rows pass the
    scope filter); if it still returns fewer than ``limit`` rows, an exact scan of the scope
    answers instead, so a small or very selective scope never loses results to the graph walk.
    """
    query = np.ascontiguousarray(vector, dtype=np.float32)
    dims = int(query.shape[0])
    if limit <= 0 or dims == 0:
        return []
    where = memory_where(scope, filters)
    source = (
        "FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq "
        "WHERE v.embedding_id = (SELECT value FROM meta WHERE key = 'embedding_id') "
        f"AND vector_dims(v.embedding) = {dims} AND {where.sql()}"
    )
    expression = vector_expression(dims, "v.embedding")
    rows: list[tuple[str, float]] = []
    if expression is not None:
        kind = "vector" if dims <= HNSW_MAX_DIMS else "halfvec"
        rows = conn.execute(
            f"SELECT m.id, {expression} <=> %s::{kind}({dims}) AS distance {source} ORDER BY distance LIMIT %s",
            (query, *where.params, limit),
            prepare=False,  # a cached generic plan would ignore how selective this scope is
        ).fetchall()
    if len(rows) < limit:
        # The bare column matches no index expression, so this is an exact scan of the filtered rows.
        rows = conn.execute(
            f"SELECT m.id, v.embedding <=> %s AS distance {source} ORDER BY distance LIMIT %s",
            (query, *where.params, limit),
            prepare=False,
        ).fetchall()
    scored = [ScoredId(memory_id, 1.0 - float(distance)) for memory_id, distance in rows]
    return sorted(scored, key=lambda hit: -hit.score)  # relaxed_order scans may be slightly out of order
