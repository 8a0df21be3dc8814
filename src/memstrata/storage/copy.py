"""Copy a whole store to another backend (SQLite file <-> PostgreSQL): ``memstrata migrate``.

Unlike the JSONL export (memories, current vectors, history, raw turns), this copies every table
row for row: memories with their counters, vectors of every model, history, raw turns with
their stored_at, jobs, key-value facts, the embedding cache, the embedding identity, the graph
(entities with their name vectors, relations open and closed) and process memory (tasks, steps,
hypotheses, artifacts, strategies).

* **Resumable.** Each table is copied in chunks, in the source's storage order (so ordering
  ties, such as history of one memory, stay in the same order), one target transaction per
  chunk. Rows whose key is already in the target are skipped, so an interrupted run is
  simply run again.
* **Verified.** At the end every table is read back on both sides into a canonical form and
  compared: row counts and an order-independent SHA-256 checksum must match. Into a target that already
  held rows of a table (copying one store into another, or a resumed run), every source row must be
  found in the target as it is; the target's own rows stay and are not a difference.

The source must not be written while it is copied. Both ends are opened as stores and read and
written through their dialects, so each keeps its own invariants (SQLite's keyword index and change
counter, PostgreSQL's tsvector column and HNSW index).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from memstrata.config import StoreSettings
from memstrata.errors import ConflictError, StoreError
from memstrata.storage import vector_blobs
from memstrata.storage.factory import is_postgres_url, open_store
from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.knowledge import SOURCE_COLUMNS
from memstrata.storage.sql.process_rows import PROCESS_TABLES
from memstrata.storage.sql.rows import (
    ENTITY_COLUMNS,
    HISTORY_COLUMNS,
    JOB_COLUMNS,
    MEMORY_WRITE_COLUMNS,
    MESSAGE_WRITE_COLUMNS,
    RELATION_COLUMNS,
    SCOPE_COLUMNS,
    names,
    scope_from,
)
from memstrata.storage.sql.store import SQLStore
from memstrata.storage.sql.writes import upsert_vectors
from memstrata.types import MemoryItem, as_utc

Row = dict[str, Any]
Cursor = tuple[Any, ...]


@dataclass(frozen=True)
class TableSpec:
    """One table as both backends see it: canonical columns and the SQL shape to page through it
    (``{vector}`` stands for the backend's vector column). Rows are told apart by the table's own unique
    keys: an insert skips a row whose key the target already holds."""

    name: str
    columns: tuple[str, ...]
    source: str  # FROM clause
    order: tuple[str, ...]  # storage order, also the paging cursor
    where: str = "TRUE"
    select: str = ""  # defaults to the columns

    def read_sql(self, after: Cursor | None, vector: str) -> str:
        """``SELECT <cursor>, <columns> ... ORDER BY <cursor> LIMIT ?``."""
        select = (self.select or ", ".join(self.columns)).format(vector=vector)
        where = self.where
        if after is not None:
            where += f" AND ({', '.join(self.order)}) > ({', '.join('?' * len(self.order))})"
        order = ", ".join(self.order)
        return f"SELECT {order}, {select} FROM {self.source} WHERE {where} ORDER BY {order} LIMIT ?"

    def canonical(self, values: Sequence[Any]) -> Row:
        """Backend values -> the one form both sides compare: ISO UTC text, sorted JSON, raw bytes."""
        row: Row = {}
        for column, value in zip(self.columns, values, strict=True):
            if value is None:
                row[column] = None
            elif column in _TIMESTAMPS:
                moment = datetime.fromisoformat(value) if isinstance(value, str) else value
                row[column] = as_utc(moment).isoformat(timespec="microseconds")
            elif column in _JSON:
                data = json.loads(value) if isinstance(value, str | bytes) else value
                row[column] = json.dumps(data, ensure_ascii=False, sort_keys=True)
            elif column in _FLAGS:
                row[column] = bool(value)
            elif column == "vector":
                vector = value if hasattr(value, "astype") else vector_blobs.decode(value)
                row[column] = vector.astype("<f4").tobytes()
            else:
                row[column] = value
        return row


# A column name means the same in every table: how values of each are compared.
_TIMESTAMPS = frozenset({"event_time", "created_at", "updated_at", "valid_from", "valid_to", "recorded_to",
                         "last_accessed_at", "timestamp", "stored_at", "lease_until", "started_at",
                         "ended_at", "retired_at"})  # fmt: skip
_JSON = frozenset({"metadata", "provenance", "details", "message_ids", "memory_ids", "result", "aliases",
                   "constraints", "tags", "evidence", "trigger_condition", "steps", "example_task_ids",
                   "counter_examples", "page_starts", "notes"})  # fmt: skip
_FLAGS = frozenset({"compressed", "dead_end", "generalisable"})  # SQLite keeps 0/1, PostgreSQL booleans
_VECTORS_FROM = "memory_vectors v JOIN memories m ON m.seq = v.memory_seq"

# In copy order: the embedding identity first (the target must agree), memories before what refers to them.
# Entity name vectors are columns of the entity row on both backends (float32 bytes), so they travel with it.
TABLES = (
    TableSpec("meta", ("key", "value"), "meta", ("key",), where="key = 'embedding_id'"),
    TableSpec("memories", MEMORY_WRITE_COLUMNS, "memories", ("seq",)),
    TableSpec("memory_vectors", ("memory_id", "embedding_id", "vector", "text_hash"), _VECTORS_FROM,
              ("v.memory_seq",), select="m.id, v.embedding_id, v.{vector}, v.text_hash"),
    TableSpec("history", tuple(names(HISTORY_COLUMNS)), "history", ("seq",)),
    TableSpec("messages", tuple(names(MESSAGE_WRITE_COLUMNS)), "messages", ("seq",)),
    TableSpec("jobs", tuple(names(JOB_COLUMNS)), "jobs", ("seq",)),
    TableSpec("kv_facts", (*SCOPE_COLUMNS, "key", "memory_id"), "kv_facts", ("key", *SCOPE_COLUMNS)),
    TableSpec("embedding_cache", ("embedding_id", "text_hash", "vector"), "embedding_cache",
              ("embedding_id", "text_hash")),
    TableSpec("entities", (*names(ENTITY_COLUMNS), "embedding_id", "vector"), "entities", ("seq",)),
    TableSpec("relations", tuple(names(RELATION_COLUMNS)), "relations", ("seq",)),
    *(TableSpec(table, tuple(names(columns)), table, ("seq",)) for _, table, columns, _ in PROCESS_TABLES),
    TableSpec("knowledge_sources", tuple(names(SOURCE_COLUMNS)), "knowledge_sources", ("seq",)),
)  # fmt: skip


def page(table: TableSpec, rows: Sequence[Sequence[Any]]) -> tuple[list[Row], Cursor | None]:
    """Split ``read_sql`` result rows into canonical rows and the cursor after the last one."""
    width = len(table.order)
    canonical = [table.canonical(tuple(row)[width:]) for row in rows]
    return canonical, (tuple(rows[-1])[:width] if rows else None)


@dataclass
class TableReport:
    table: str
    source_rows: int = 0
    target_rows: int = 0
    copied: int = 0
    skipped: int = 0  # already in the target: a resumed run
    source_checksum: str = ""
    target_checksum: str = ""
    # A target that held rows of this table before the copy (a merge, or a resumed run) is verified to hold
    # every source row as it is; rows of its own may remain beside them. None: the two were compared whole.
    missing: int | None = None

    @property
    def matches(self) -> bool:
        if self.missing is not None:
            return self.missing == 0
        return self.source_rows == self.target_rows and self.source_checksum == self.target_checksum


@dataclass
class CopyReport:
    source: str
    target: str
    tables: list[TableReport] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return all(table.matches for table in self.tables)


Progress = Callable[[str, int, int], None]  # (table, copied so far, skipped so far), after every chunk


def copy_store(source: str, target: str, *, chunk_size: int = 1000, progress: Progress | None = None) -> CopyReport:
    """Copy every row of ``source`` into ``target`` (both store locations), then verify both sides."""
    if _same_store(source, target):
        raise StoreError("source and target are the same store; name two different ones")
    with Endpoint(source, must_exist=True) as src, Endpoint(target, must_exist=False) as dst:
        _check_embedding_ids(src, dst)
        dst.transaction(dst.dialect.before_copy)
        report = CopyReport(source=src.location, target=dst.location)
        held_rows = {table.name for table in TABLES if dst.read(table, None, 1)[0]}
        for table in TABLES:
            report.tables.append(_copy_table(src, dst, table, chunk_size, progress))
        dst.transaction(dst.dialect.after_copy)
        for table_report, table in zip(report.tables, TABLES, strict=True):
            if table.name in held_rows:
                _containment_into(table_report, src, dst, table, chunk_size)
            else:
                _checksum_into(table_report, src, dst, table, chunk_size)
        return report


def _same_store(source: str, target: str) -> bool:
    """The same location, however spelled (./a.db and a.db, a link to it)."""
    if source.strip() == target.strip():
        return True
    if is_postgres_url(source) or is_postgres_url(target):
        return False
    first, second = Path(source.strip()).expanduser(), Path(target.strip()).expanduser()
    try:
        return first.resolve() == second.resolve() or (second.exists() and first.samefile(second))
    except OSError:
        return False


def verify_copy(source: str, target: str, *, chunk_size: int = 1000) -> CopyReport:
    """Compare two stores table by table without copying anything."""
    with Endpoint(source, must_exist=True) as src, Endpoint(target, must_exist=True) as dst:
        report = CopyReport(source=src.location, target=dst.location)
        for table in TABLES:
            table_report = TableReport(table.name)
            _checksum_into(table_report, src, dst, table, chunk_size)
            report.tables.append(table_report)
        return report


def _embedding_id(endpoint: Endpoint) -> str | None:
    rows, _ = endpoint.read(TABLES[0], None, 10)
    return next((str(row["value"]) for row in rows if row["key"] == "embedding_id"), None)


def _check_embedding_ids(src: Endpoint, dst: Endpoint) -> None:
    source_id, target_id = _embedding_id(src), _embedding_id(dst)
    if source_id and target_id and source_id != target_id:
        raise ConflictError(
            f"the target holds vectors of {target_id!r} but the source has {source_id!r}; "
            "migrate into an empty store, or run `memstrata reindex` on one side first"
        )


def _copy_table(
    src: Endpoint, dst: Endpoint, table: TableSpec, chunk_size: int, progress: Progress | None
) -> TableReport:
    report = TableReport(table.name)
    cursor: Cursor | None = None
    while True:
        rows, cursor = src.read(table, cursor, chunk_size)
        if not rows:
            return report
        copied = dst.insert(table, rows)
        report.copied += copied
        report.skipped += len(rows) - copied
        if progress is not None:
            progress(table.name, report.copied, report.skipped)


def row_digests(endpoint: Endpoint, table: TableSpec, chunk_size: int = 1000) -> Iterator[bytes]:
    """The SHA-256 of every canonical row, in storage order."""
    cursor: Cursor | None = None
    while True:
        rows, cursor = endpoint.read(table, cursor, chunk_size)
        if not rows:
            return
        for row in rows:
            if table.name == "memory_vectors":  # SQLite keeps them as float16: compared at that precision
                stored = vector_blobs.as_stored(np.frombuffer(row["vector"], dtype="<f4"))
                row = {**row, "vector": stored.astype("<f4").tobytes()}
            encoded = json.dumps(
                [row[column].hex() if isinstance(row[column], bytes) else row[column] for column in table.columns],
                ensure_ascii=False,
            )
            yield hashlib.sha256(encoded.encode("utf-8")).digest()


def checksum(endpoint: Endpoint, table: TableSpec, chunk_size: int = 1000) -> tuple[int, str]:
    """Row count and an order-independent digest: the sum of every canonical row's SHA-256."""
    count, total = 0, 0
    for digest in row_digests(endpoint, table, chunk_size):
        count, total = count + 1, (total + int.from_bytes(digest, "big")) % (1 << 256)
    return count, f"{total:064x}"


def _checksum_into(report: TableReport, src: Endpoint, dst: Endpoint, table: TableSpec, chunk_size: int) -> None:
    report.source_rows, report.source_checksum = checksum(src, table, chunk_size)
    report.target_rows, report.target_checksum = checksum(dst, table, chunk_size)


def _containment_into(report: TableReport, src: Endpoint, dst: Endpoint, table: TableSpec, chunk_size: int) -> None:
    """Whether every source row is in the target as it is (a row whose key the target held with other values
    was skipped, and counts as missing). A digest per target row is held in memory: ~100 MB a million rows."""
    held = set(row_digests(dst, table, chunk_size))
    report.target_rows, report.missing = len(held), 0
    for digest in row_digests(src, table, chunk_size):
        report.source_rows += 1
        report.missing += digest not in held


class Endpoint:
    """A store seen table by table, in canonical rows (opening it creates or migrates its schema)."""

    def __init__(self, location: str, *, must_exist: bool) -> None:
        file = Path(location).expanduser()
        if must_exist and not is_postgres_url(location) and not file.is_file():
            raise StoreError(f"no SQLite store at {file}; check the path")
        store = open_store(StoreSettings(path=location))
        assert isinstance(store, SQLStore)  # both backends are
        self.store, self.dialect, self.location = store, store.dialect, store.location
        self.transaction = store.dialect.transaction

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.store.close()

    def read(self, table: TableSpec, after: Cursor | None, limit: int) -> tuple[list[Row], Cursor | None]:
        """Up to ``limit`` rows after ``after`` in storage order, and the cursor of the last one."""
        sql = table.read_sql(after, vector=self.dialect.vector_column)
        return page(table, self.dialect.read(lambda tx: tx.execute(sql, (*(after or ()), limit)).fetchall()))

    def insert(self, table: TableSpec, rows: Sequence[Row]) -> int:
        """Rows in one transaction, with what the target's indexes need; those whose key the target already
        holds are skipped (a resumed run). Returns how many were new."""
        return self.transaction(lambda tx: self._insert(tx, table, rows))

    def _insert(self, tx: Tx, table: TableSpec, rows: Sequence[Row]) -> int:
        d = self.dialect
        d.begin_batch(tx)
        if table.name == "memory_vectors":
            vectors = [
                (row["embedding_id"], np.frombuffer(row["vector"], dtype="<f4"), row["memory_id"], row["text_hash"])
                for row in rows
            ]
            copied = upsert_vectors(d, tx, vectors, replace=False)
            if d.touch:  # an index that follows changed rows must see these vectors
                tx.executemany(f"UPDATE memories SET embedding_id = embedding_id{d.touch} WHERE id = ?",
                               [(row["memory_id"],) for row in rows])  # fmt: skip
            return copied
        columns, marks = list(table.columns), ["?"] * len(table.columns)
        params = [[row[column] for column in table.columns] for row in rows]
        items = [_indexable(row) for row in rows] if table.name == "memories" else []
        if items:  # str parameters go untyped: PostgreSQL parses the JSON and timestamps itself
            columns += [column for column, _ in d.memory_extras]
            marks += [expression for _, expression in d.memory_extras]
            params = [[*values, *d.memory_extra_params(item)] for values, item in zip(params, items, strict=True)]
        sql = f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(marks)}) ON CONFLICT DO NOTHING"
        copied = tx.executemany(sql, params).rowcount
        d.index_memories(tx, items)  # again for a memory already there: the same entry
        return copied


def _indexable(row: Row) -> MemoryItem:
    """The memory a canonical row holds, as far as its keyword entry reads it: its key and scope too. Built of id,
    kind, text and metadata only, a key fact lost its key's words on the target ("Where is my home?" scored
    住在上海 0.74 before a copy, 0.17 after; found by a user trial)."""
    created = datetime.fromisoformat(row["created_at"])
    scope = scope_from(row["tenant_id"], row["user_id"], row["agent_id"], row["session_id"])
    return MemoryItem.model_construct(
        id=row["id"], scope=scope, kind=row["kind"], text=row["text"], key=row["key"],
        metadata=json.loads(row["metadata"]), created_at=created, updated_at=created,
        valid_from=datetime.fromisoformat(row["valid_from"]),
    )  # fmt: skip
