"""Connecting to PostgreSQL: URL handling, the connection pool, vector adapters, the shared SQL's
placeholders, schema migration, error translation.

psycopg errors never reach the caller: :func:`translated` turns them into memstrata errors whose
message says what to do. Transactions that lose a deadlock or a serialization race are retried
(:func:`retrying`), since PostgreSQL, unlike SQLite, lets writers run side by side.
"""

from __future__ import annotations

import random
import struct
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg import errors as pgerrors
from psycopg.abc import Buffer
from psycopg.adapt import Dumper, Loader
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg_pool import ConnectionPool, PoolTimeout

from memstrata.errors import InvalidInputError, MemstrataError, NotFoundError, StoreError
from memstrata.patterns import lazy_pattern
from memstrata.storage.postgres.schema_migrations import LEDGER, MIGRATION_LOCK, MIGRATIONS
from memstrata.storage.sql.dialect import Dialect, Tx, duplicate_error
from memstrata.storage.sql.schema import upgrade

T = TypeVar("T")

# Session settings of every pooled connection. Scope filters sit in the same WHERE as the vector
# ORDER BY, so an HNSW scan may find too few rows that pass them: iterative scans keep walking the
# graph until LIMIT rows pass (pgvector >= 0.8), instead of silently returning fewer.
SESSION_SETTINGS = {
    "TimeZone": "UTC",
    "hnsw.ef_search": "100",
    "hnsw.iterative_scan": "relaxed_order",
    "hnsw.max_scan_tuples": "50000",
}


_QUERY_PASSWORD = lazy_pattern(r"(?i)([?&]password=)[^&#]*")


def masked(url: str) -> str:
    """The URL without its password (``user:pw@`` or ``?password=pw``), for logs, stats and error messages."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.rsplit("@", 1)
        url = urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{netloc[-1]}"))
    return _QUERY_PASSWORD.sub(r"\1***", url)


# --- numpy <-> pgvector, binary on the wire ----------------------------------------------------
class _VectorBinaryDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> Buffer:
        values = np.asarray(obj, dtype=">f4")
        return struct.pack(">HH", values.shape[0], 0) + values.tobytes()


class _VectorBinaryLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> Any:
        return np.frombuffer(bytes(data), dtype=">f4", offset=4).astype(np.float32)


def register_vector(conn: psycopg.Connection[Any], oid: int) -> None:
    """numpy float32 arrays are sent and read as pgvector ``vector`` values, in binary only: the store reads
    binary results, and a text dumper would be chosen for ``%s`` (the last one registered wins)."""
    conn.adapters.register_dumper(np.ndarray, type("VectorBinaryDumper", (_VectorBinaryDumper,), {"oid": oid}))
    conn.adapters.register_loader(oid, _VectorBinaryLoader)


def vector_oid(conn: psycopg.Connection[Any]) -> int:
    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        raise StoreError("the pgvector extension is missing in this database; run CREATE EXTENSION vector as an admin")
    return info.oid


# --- the shared SQL on psycopg -------------------------------------------------------------------
@lru_cache(maxsize=1024)
def pyformat(sql: str) -> str:
    """The store's ``?`` placeholders as psycopg's ``%s`` (the shared SQL has no ``?`` operator or literal)."""
    return sql.replace("%", "%%").replace("?", "%s")


class Session:
    """A psycopg connection speaking the shared SQL; results come in binary (vectors, JSONB, timestamps)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = (), /, *, prepare: bool | None = None) -> psycopg.Cursor[Any]:
        return self.raw.execute(pyformat(sql), params, prepare=prepare, binary=True)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> psycopg.Cursor[Any]:
        cursor = self.raw.cursor(binary=True)
        cursor.executemany(pyformat(sql), rows)
        return cursor


def migrate(conn: psycopg.Connection[Any], dialect: Dialect) -> int:
    """Bring the schema up to date on an autocommit connection; returns the schema version."""
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))

            def run(_: Tx, script: str) -> None:
                if script.strip():  # a step may hold nothing for PostgreSQL (SQLite's own indexes, step 10)
                    conn.execute(script.encode())  # whole, in one simple-protocol call that may hold several statements

            return upgrade(dialect, Session(conn), LEDGER, MIGRATIONS, run)
    except pgerrors.InsufficientPrivilege as exc:
        raise StoreError(
            f"cannot create memstrata's tables or the vector extension ({str(exc).strip()}); run "
            "`CREATE EXTENSION vector` as a superuser, and grant this user CREATE on the database"
        ) from None


# --- pool ----------------------------------------------------------------------------------
def connect(url: str, *, timeout_s: float) -> psycopg.Connection[Any]:
    """One plain autocommit connection (migrations, admin work)."""
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=max(1, int(timeout_s)))
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to PostgreSQL at {masked(url)}: {_first_line(exc)}; check store.path and that the "
            "server is running"
        ) from None


def open_pool(url: str, *, oid: int, size: int, timeout_s: float, name: str = "memstrata") -> ConnectionPool:
    def configure(conn: psycopg.Connection[Any]) -> None:
        register_vector(conn, oid)
        for name, value in SESSION_SETTINGS.items():
            conn.execute("SELECT set_config(%s, %s, false)", (name, value))
        conn.execute("SELECT set_config('lock_timeout', %s, false)", (f"{int(timeout_s * 1000)}ms",))

    pool = ConnectionPool(
        url,
        min_size=1,
        max_size=max(1, size),
        kwargs={"autocommit": True},  # reads are single statements; writes open explicit transactions
        configure=configure,
        # a connection the server dropped (a restart, an idle timeout) is replaced before use, not handed to a
        # request that then fails with 503; the check is one round trip
        check=ConnectionPool.check_connection,
        timeout=timeout_s,
        open=False,
        name=name,
    )
    try:
        pool.open(wait=True, timeout=timeout_s)
    except PoolTimeout:
        pool.close()
        raise StoreError(f"cannot open a connection pool to PostgreSQL at {masked(url)} within {timeout_s:.0f} s; "
                         "check that the server is running and accepts connections") from None  # fmt: skip
    return pool


# --- errors --------------------------------------------------------------------------------
def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


@contextmanager
def translated(location: str) -> Iterator[None]:
    """Turn psycopg and pool errors into memstrata errors that say what to do."""
    try:
        yield
    except MemstrataError:
        raise
    except pgerrors.UniqueViolation as exc:
        constraint = exc.diag.constraint_name or ""
        table = constraint.removesuffix("_id_key") if constraint.endswith("_id_key") else None
        raise duplicate_error(table, exc.diag.message_detail or "") from None
    except pgerrors.ForeignKeyViolation:  # the row it points at went in the meantime (an erase, a purge)
        raise NotFoundError(
            "a record this write refers to was deleted meanwhile (an erase or purge of its scope); nothing was written"
        ) from None
    except (pgerrors.UntranslatableCharacter, pgerrors.CharacterNotInRepertoire) as exc:
        raise InvalidInputError(
            f"PostgreSQL cannot store this text ({_first_line(exc)}); remove NUL characters"
        ) from None
    except pgerrors.LockNotAvailable:
        raise StoreError(
            "a row stayed locked by another transaction for longer than store.busy_timeout_s; retry, "
            "or raise store.busy_timeout_s"
        ) from None
    except PoolTimeout:
        raise StoreError(
            f"no free database connection to {location}; every pooled connection is busy: raise store.pool_size, "
            "or the server's max_connections (or put pgbouncer in front)"
        ) from None
    except psycopg.OperationalError as exc:
        raise StoreError(
            f"lost the connection to PostgreSQL at {location}: {_first_line(exc)}; check the server and retry"
        ) from None
    except psycopg.Error as exc:
        raise StoreError(f"PostgreSQL error at {location}: {_first_line(exc)}") from None


RETRYABLE = (pgerrors.DeadlockDetected, pgerrors.SerializationFailure)


def retrying(action: Callable[[], T], *, attempts: int = 6) -> T:
    """Run a whole transaction again when PostgreSQL aborted it to break a deadlock or a race.

    The aborted transaction was rolled back entirely, so running it again cannot apply it twice.
    """
    delay = 0.005
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except RETRYABLE:
            if attempt == attempts:
                raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.2)
    raise AssertionError("unreachable")
