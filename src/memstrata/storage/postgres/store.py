"""The server backend: PostgreSQL + pgvector, shared by many processes through a connection pool."""

from __future__ import annotations

from dataclasses import replace

from memstrata.storage.postgres.dialect import PostgresDialect
from memstrata.storage.protocol import StoreStats
from memstrata.storage.sql.store import SQLStore
from memstrata.types import AdminScope


class PostgresStore(SQLStore):
    def __init__(self, url: str, *, pool_size: int = 8, timeout_s: float = 30.0, read_url: str | None = None) -> None:
        self.url = url
        self._postgres = PostgresDialect(url, pool_size=pool_size, timeout_s=timeout_s, read_url=read_url)
        super().__init__(self._postgres, self._postgres.schema_version)

    def stats(self, scope: AdminScope | None = None) -> StoreStats:
        found = super().stats(scope)
        if self._postgres.replica_location is None:
            return found
        lag = self._postgres.replica_lag_ms()
        extra = found.extra | {"read_replica_lag_ms": -1 if lag is None else lag}  # -1: the replica did not answer
        return replace(found, read_replica=self._postgres.replica_location, extra=extra)
