"""The PostgreSQL side of ``memstrata migrate``: a store seen table by table in canonical rows.

See ``storage/transfer_backends.py`` for the copy and verification logic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memstrata.storage.postgres.connection import connect, masked, register_vector, vector_oid
from memstrata.storage.postgres.migrations import ensure_vector_index
from memstrata.storage.postgres.rows import tsvector_literal
from memstrata.storage.postgres.store import PostgresStore
from memstrata.storage.postgres.writes import embedding_dims
from memstrata.storage.transfer_backends import Cursor, Row, TableSpec, keyword_document, page

_CONFLICT = {
    "meta": " ON CONFLICT (key) DO NOTHING",
    "kv_facts": " ON CONFLICT (key, tenant_id, user_id, agent_id, session_id) DO UPDATE SET memory_id = "
    "EXCLUDED.memory_id",
    "embedding_cache": " ON CONFLICT DO NOTHING",
}


class PostgresEndpoint:
    def __init__(self, url: str, *, timeout_s: float = 30.0) -> None:
        PostgresStore(url, pool_size=1, timeout_s=timeout_s).close()  # creates or migrates the schema
        self.location = masked(url)
        self._conn = connect(url, timeout_s=timeout_s)
        register_vector(self._conn, vector_oid(self._conn))
        self._conn.execute("SET TIME ZONE 'UTC'")

    def read(self, table: TableSpec, after: Cursor | None, limit: int) -> tuple[list[Row], Cursor | None]:
        sql = table.read_sql(after, vector="embedding", mark="%s")
        return page(table, self._conn.execute(sql, (*(after or ()), limit), binary=True).fetchall())

    def present(self, table: TableSpec, keys: Sequence[Cursor]) -> set[Cursor]:
        if not keys:
            return set()
        lookup = [key[table.lookup] for key in keys]
        found = self._conn.execute(table.present_sql("= ANY(%s)"), (lookup,)).fetchall()
        return {tuple(row) for row in found} & set(keys)

    def insert(self, table: TableSpec, rows: Sequence[Row]) -> None:
        with self._conn.transaction(), self._conn.cursor() as cur:
            if table.name == "memory_vectors":
                cur.executemany(
                    "INSERT INTO memory_vectors (memory_seq, embedding_id, embedding) SELECT seq, %s, %s "
                    "FROM memories WHERE id = %s ON CONFLICT (memory_seq) DO UPDATE SET "
                    "embedding_id = EXCLUDED.embedding_id, embedding = EXCLUDED.embedding",
                    [
                        (row["embedding_id"], np.frombuffer(row["vector"], dtype="<f4"), row["memory_id"])
                        for row in rows
                    ],
                )
                return
            columns = list(table.columns)
            marks = ["%s"] * len(columns)  # str parameters go as "unknown": the server parses JSON and timestamps
            if table.name == "memories":
                columns.append("tokens")
                marks.append("%s::tsvector")
            cur.executemany(
                f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(marks)})"
                + _CONFLICT.get(table.name, ""),
                [self._values(table, row) for row in rows],
            )

    @staticmethod
    def _values(table: TableSpec, row: Row) -> list[Any]:
        values = [row[column] for column in table.columns]
        if table.name == "memories":
            values.append(tsvector_literal(keyword_document(row)))
        return values

    def prepare(self) -> None:
        """Into an empty table, vectors are copied without their HNSW index: one build at the end is
        about 10x faster than inserting every vector into the graph."""
        if self._conn.execute("SELECT EXISTS (SELECT 1 FROM memory_vectors)").fetchone() == (False,):
            for (name,) in self._conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vectors' AND starts_with(indexname, %s) "
                "AND schemaname = current_schema()",
                ("memory_vectors_hnsw_",),
            ).fetchall():
                self._conn.execute(f'DROP INDEX IF EXISTS "{name}"')

    def finish(self) -> None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = 'embedding_id'").fetchone()
        if row is not None:
            with self._conn.transaction():
                self._conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
                ensure_vector_index(self._conn, embedding_dims(str(row[0])))

    def close(self) -> None:
        self._conn.close()
