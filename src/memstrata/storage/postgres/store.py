"""The server backend: PostgreSQL + pgvector, shared by many processes through a connection pool."""

from __future__ import annotations

from memstrata.storage.postgres.dialect import PostgresDialect
from memstrata.storage.sql.store import SQLStore


class PostgresStore(SQLStore):
    def __init__(self, url: str, *, pool_size: int = 8, timeout_s: float = 30.0) -> None:
        self.url = url
        dialect = PostgresDialect(url, pool_size=pool_size, timeout_s=timeout_s)
        super().__init__(dialect, dialect.schema_version)
