"""Read replicas: a hot standby of the primary answers the costly part of search (the keyword and vector
candidates), so adding standbys adds search capacity; everything else stays on the primary.

Why only the candidates: they are checked against the primary's rows (by id, with the search's scope and
filters) and the records a search returns are read from the primary, so a memory deleted, superseded or
changed on the primary is never returned as it was. What replica lag can still do is miss a memory added in the
last moments (streaming replication: usually milliseconds).

A standby refuses DDL, so it is opened read-only: no migration and no index creation, only checks that it is a
copy of this store (the store's id in ``meta``) at this schema version, waiting up to the connect timeout for
replication to bring both. A replica that fails at run time (down, unreachable, pool exhausted, an error such as a
schema it has not replayed yet) is skipped for ``RETRY_AFTER_S`` and its searches run on the primary, with a warning
in the log; a query it cancels for a conflict with replay is asked of the primary at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool, PoolTimeout

from memstrata.errors import StoreError
from memstrata.storage.postgres.connection import connect, masked, open_pool, translated, vector_oid

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_AFTER_S = 30.0  # how long searches stay on the primary after the replica failed
REPLICA_WAIT_S = 2.0  # the longest a search waits for a replica connection before it asks the primary
# Errors that say the replica cannot answer now (down, unreachable, or behind the primary's schema); any other error
# would fail on the primary too, and is raised.
UNAVAILABLE = (psycopg.OperationalError, pgerrors.UndefinedTable, pgerrors.UndefinedColumn, pgerrors.UndefinedFunction)
STORE_ID_SQL = "SELECT value FROM meta WHERE key = 'store_id'"
SCHEMA_SQL = "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"


def _value(conn: psycopg.Connection[Any], sql: str) -> Any:
    """The one value of a query that returns one row, or None when it returns none."""
    row = conn.execute(sql).fetchone()
    return None if row is None else row[0]


def refuse_standby(conn: psycopg.Connection[Any], location: str) -> None:
    """A standby given as the store itself cannot be migrated or written: say what to configure instead."""
    if _value(conn, "SELECT pg_is_in_recovery()"):
        raise StoreError(
            f"store.path points at a read-only standby ({location}); set store.path to the primary and "
            "store.read_url to this standby, so searches use it and writes go to the primary"
        )


def check_copy(conn: psycopg.Connection[Any], *, store_id: str, schema_version: int, wait_s: float,
               location: str) -> None:  # fmt: skip
    """Wait until the replica holds this store at this schema version, or say why it does not."""
    deadline = time.monotonic() + wait_s
    while True:
        if _value(conn, "SELECT to_regclass('schema_migrations') IS NOT NULL AND to_regclass('meta') IS NOT NULL"):
            version = int(_value(conn, SCHEMA_SQL))
            found = _value(conn, STORE_ID_SQL)
            held = None if found is None else str(found)
        else:
            version, held = 0, None
        if held == store_id and version == schema_version:
            return
        if (held is not None and held != store_id) or time.monotonic() > deadline:
            break
        time.sleep(0.1)  # a standby of this primary receives the id and the schema moments later
    if held is not None and held != store_id:
        what = "a different store"
    elif held is None:
        what = "no memstrata store" if version == 0 else f"schema version {version} and no store id"
    else:
        what = f"this store at schema version {version}"
    raise StoreError(
        f"store.read_url ({location}) is not a current copy of store.path: it holds {what}, the primary this "
        f"store at schema version {schema_version}; point store.read_url at a standby replicating from "
        "store.path (or wait for it to catch up), or unset it"
    )


class SearchRoute:
    """Where search candidates are read: the replica while it answers, else the primary."""

    def __init__(self, primary: ConnectionPool, replica: ConnectionPool | None, replica_location: str | None) -> None:
        self._primary = primary
        self._replica = replica
        self.replica_location = replica_location
        self._skip_until = 0.0
        self._lock = threading.Lock()

    @classmethod
    def open(cls, primary: ConnectionPool, url: str | None, *, store_id: str, schema_version: int,
             size: int, timeout_s: float) -> SearchRoute:  # fmt: skip
        if not url:
            return cls(primary, None, None)
        location = masked(url)
        with translated(location), connect(url, timeout_s=timeout_s) as conn:
            check_copy(conn, store_id=store_id, schema_version=schema_version, wait_s=timeout_s, location=location)
            oid = vector_oid(conn)
        return cls(primary, open_pool(url, oid=oid, size=size, timeout_s=timeout_s, name="memstrata-replica"),
                   location)  # fmt: skip

    def run(self, action: Callable[[psycopg.Connection[Any]], T]) -> tuple[T, bool]:
        """``action`` on a replica connection, or on the primary when the replica cannot answer; and whether the
        replica answered."""
        if self._replica is not None and time.monotonic() >= self._skip_until:
            try:
                with self._replica.connection(timeout=REPLICA_WAIT_S) as conn:
                    return action(conn), True
            except pgerrors.TransactionRollback:
                pass  # a query cancelled by a conflict with replay: this one asks the primary; the replica stays
            except (*UNAVAILABLE, PoolTimeout) as exc:
                self._skip(exc)
        with self._primary.connection() as conn:
            return action(conn), False

    def _skip(self, exc: BaseException) -> None:
        with self._lock:
            self._skip_until = time.monotonic() + RETRY_AFTER_S
        log.warning("the read replica at %s failed (%s); searches use the primary for the next %.0f s",
                    self.replica_location, str(exc).strip().splitlines()[0] if str(exc).strip() else
                    type(exc).__name__, RETRY_AFTER_S)  # fmt: skip

    def lag_ms(self) -> int | None:
        """How long the replica has been replaying WAL it received but not yet applied, in ms: 0 when it applied
        all it received (an idle primary sends nothing, so the age of the last replayed commit would mislead);
        None without a replica, or when it cannot say."""
        if self._replica is None:
            return None
        sql = (
            "SELECT CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0 "
            "ELSE CAST(1000 * EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) AS BIGINT) END"
        )
        try:
            with self._replica.connection(timeout=REPLICA_WAIT_S) as conn:
                value = _value(conn, sql)
        except (psycopg.Error, PoolTimeout):
            return None
        return None if value is None else max(0, int(value))

    def close(self) -> None:
        if self._replica is not None:
            self._replica.close()
