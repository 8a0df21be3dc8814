"""The SQLite dialect: one file shared by processes, one connection per store guarded by a lock, FTS5 for
keywords and an in-process numpy index for vectors (this Python's sqlite3 cannot load sqlite-vec)."""

from __future__ import annotations

import json
import mmap
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memstrata.indexing import index_text
from memstrata.lexical import index_document
from memstrata.query import Filters
from memstrata.storage.protocol import ScoredId, Vector
from memstrata.storage.sql.dialect import Tx, duplicate_error
from memstrata.storage.sql.schema import upgrade
from memstrata.storage.sql.where import Where, memory_where, scope_where
from memstrata.storage.sqlite.connection import connect, retry_locked
from memstrata.storage.sqlite.schema_migrations import LEDGER, MIGRATIONS, run_script
from memstrata.storage.vector_index import IndexFilter, IndexRow, VectorIndex
from memstrata.types import MemoryItem, Scope, as_utc

T = TypeVar("T")
# Every write bumps meta.rev and stamps the memories it touches with it, so each process's vector index
# catches up on rows with a newer rev; deletes bump index_epoch, and the index is rebuilt.
_REV = "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'rev')"
_LONG_LIST = 100  # longer IN lists travel as one JSON parameter


def _quoted(token: str) -> str:
    """An FTS5 string: user text can never act as query syntax."""
    return '"' + token.replace('"', '""') + '"'


class SQLiteDialect:
    vector_column = "vector"
    by_key = "+"  # unary plus: planned on the key, not the scope index
    for_update = ""  # BEGIN IMMEDIATE already holds the file's write lock
    skip_locked = ""
    memory_extras: tuple[tuple[str, str], ...] = (("rev", _REV),)
    touch = f", rev = {_REV}"

    def __init__(self, path: Path, *, busy_timeout_s: float, file_mode: int | None) -> None:
        self.path = path
        self.location = str(path)
        self._timeout = busy_timeout_s
        self._lock = threading.RLock()
        self._conn = connect(path, busy_timeout_s=busy_timeout_s, file_mode=file_mode)
        self._index: VectorIndex | None = None
        self._index_state: tuple[str, str] | None = None  # (epoch, embedding id) the index was built for
        self._index_rev = -1

    def migrate(self) -> int:
        return self.transaction(lambda tx: upgrade(self, tx, LEDGER, MIGRATIONS, run_script))

    # --- connections ---------------------------------------------------------------------------
    def read(self, action: Callable[[Tx], T]) -> T:
        with self._lock:
            return retry_locked(lambda: action(self._conn), timeout_s=self._timeout)

    def transaction(self, action: Callable[[Tx], T]) -> T:
        """BEGIN IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout instead of
        failing on a lock upgrade."""
        with self._lock:
            retry_locked(lambda: self._conn.execute("BEGIN IMMEDIATE"), timeout_s=self._timeout)
            try:
                result = action(self._conn)
                self._conn.execute("COMMIT")
                return result
            except sqlite3.IntegrityError as exc:
                self._conn.execute("ROLLBACK")
                table = re.search(r"UNIQUE constraint failed: (\w+)\.id$", str(exc))
                raise duplicate_error(table and table[1], str(exc)) from None
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- values: ISO text for timestamps (fixed width UTC, so text order is time order), JSON text ------
    def ts(self, moment: datetime | None) -> str | None:
        return None if moment is None else as_utc(moment).isoformat(timespec="microseconds")

    def time(self, value: Any) -> datetime | None:
        return None if value is None else datetime.fromisoformat(value)

    def json(self, value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    def model_json(self, value: Any) -> str:
        return self.json(value)

    def model_text(self, value: str | None) -> str | None:
        return value

    def from_json(self, value: Any) -> Any:
        return None if value is None else json.loads(value)

    def vector(self, vector: Vector) -> bytes:
        return np.ascontiguousarray(vector, dtype=np.float32).tobytes()

    def from_vector(self, value: Any) -> Vector:
        return np.frombuffer(value, dtype=np.float32)

    def memory_extra_params(self, item: MemoryItem) -> tuple[Any, ...]:
        return ()

    # --- SQL pieces --------------------------------------------------------------------------
    def in_(self, column: str, values: Sequence[Any], *, negate: bool = False) -> tuple[str, list[Any]]:
        operator = "NOT IN" if negate else "IN"
        if len(values) > _LONG_LIST:
            return f"{column} {operator} (SELECT value FROM json_each(?))", [json.dumps(list(values))]
        return f"{column} {operator} ({', '.join('?' * len(values))})", list(values)

    def json_text(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    def metadata_is(self, column: str, name: str, value: Any) -> tuple[str, list[Any]]:
        path = f'$."{name}"'  # built from a validated identifier; values are bound parameters
        if value is None:
            return f"json_extract({column}, ?) IS NULL", [path]
        return f"json_extract({column}, ?) = ?", [path, int(value) if isinstance(value, bool) else value]

    # --- bookkeeping: the FTS5 table (rowid = memories.seq) and the vector index's counters ------------
    def begin_batch(self, tx: Tx) -> None:
        tx.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'rev'")

    def index_memories(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        tx.executemany("DELETE FROM memory_fts WHERE rowid = (SELECT seq FROM memories WHERE id = ?)",
                       [(item.id,) for item in items])  # fmt: skip
        tx.executemany("INSERT INTO memory_fts (rowid, tokens) SELECT seq, ? FROM memories WHERE id = ?",
                       [(index_document(index_text(item)), item.id) for item in items])  # fmt: skip

    def drop_memories(self, tx: Tx, seqs: Sequence[int] | None) -> dict[str, int]:
        if seqs is None:
            dropped = tx.execute("DELETE FROM memory_fts").rowcount
        else:
            condition, params = self.in_("rowid", seqs)
            dropped = tx.execute(f"DELETE FROM memory_fts WHERE {condition}", params).rowcount if seqs else 0
        tx.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_epoch'")
        return {"memory_fts": dropped}

    def lock_claims(self, tx: Tx) -> None:
        return None  # BEGIN IMMEDIATE: one claimer at a time already

    def on_embedding_id(self, tx: Tx, embedding_id: str) -> None:
        return None

    def scrub(self) -> None:
        """FTS5 keeps deleted terms in old index segments until they are merged: 'optimize' merges them all
        away (secure_delete zeroes the freed pages), then the WAL's old page images are checkpointed away."""
        self.transaction(lambda tx: tx.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')"))
        self.read(lambda tx: tx.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    def compact(self) -> None:
        self.read(lambda tx: tx.execute("VACUUM"))
        self.read(lambda tx: tx.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    def before_copy(self, tx: Tx) -> None:
        return None

    def after_copy(self, tx: Tx) -> None:
        return None

    # --- search and whole-store -----------------------------------------------------------------
    def keyword_search(self, tx: Tx, tokens: Sequence[str], where: Where, limit: int) -> list[ScoredId]:
        found = tx.execute(
            "SELECT m.id, bm25(memory_fts) AS rank FROM memory_fts JOIN memories m ON m.seq = memory_fts.rowid "
            f"WHERE memory_fts MATCH ? AND {where.sql()} ORDER BY rank LIMIT ?",
            (" OR ".join(map(_quoted, tokens)), *where.params, limit),
        ).fetchall()
        return [ScoredId(memory_id, -float(rank)) for memory_id, rank in found]

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
        with self._lock:
            index = self._synced_index()
            if index is None:
                return []
            allowed = None
            if filters.needs_row_filter():
                where = memory_where(self, scope, filters)
                sql = f"SELECT m.seq FROM memories m WHERE {where.sql()}"
                seqs = self.read(lambda tx: tx.execute(sql, where.params).fetchall())
                allowed = np.fromiter((row[0] for row in seqs), dtype=np.int64, count=len(seqs))
            statuses = [status.value for status in filters.status]
            found = index.search(
                np.asarray(vector, dtype=np.float32),
                IndexFilter(
                    tenant_id=scope.tenant_id or "",
                    user_id=scope.user_id,
                    agent_id=scope.agent_id,
                    session_id=scope.session_id,
                    statuses=statuses,
                    kinds=filters.kind,
                    excluded_kinds=filters.exclude_kind,
                    allowed_seqs=allowed,
                ),
                limit,
            )
            if not found:
                return []
            where = scope_where(self, scope, by_key=True)  # checked again in SQL: the index is a cache
            condition, params = self.in_("m.seq", [seq for seq, _ in found])
            sql = f"SELECT m.seq, m.id FROM memories m WHERE {condition} AND {where.sql()}"
            ids = dict(self.read(lambda tx: tx.execute(sql, (*params, *where.params)).fetchall()))
            return [ScoredId(ids[seq], score) for seq, score in found if seq in ids]

    def _synced_index(self) -> VectorIndex | None:
        """Bring the in-process index up to date with rows other processes may have written."""
        self._conn.execute("BEGIN")  # one snapshot for the counters and the changed rows
        try:
            meta = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
            embedding_id = meta.get("embedding_id")
            if embedding_id is None:
                return None
            state = (meta["index_epoch"], embedding_id)
            if self._index is None or self._index_state != state:
                self._index = VectorIndex(dims=int(embedding_id.rsplit(":", 1)[1]))
                self._index_state, self._index_rev = state, -1
            rev = int(meta["rev"])
            if rev > self._index_rev:
                self._apply_changes(self._index, embedding_id)
                self._index_rev = rev
            return self._index
        finally:
            self._conn.execute("COMMIT")

    def _apply_changes(self, index: VectorIndex, embedding_id: str) -> None:
        cursor = self._conn.execute(
            "SELECT m.seq, m.tenant_id, m.user_id, m.agent_id, m.session_id, m.status, m.kind, v.vector "
            "FROM memories m "
            "LEFT JOIN memory_vectors v ON v.memory_seq = m.seq AND v.embedding_id = ? WHERE m.rev > ?",
            (embedding_id, self._index_rev),
        )
        while chunk := cursor.fetchmany(50_000):
            fresh = []
            for seq, tenant_id, user_id, agent_id, session_id, status, kind, blob in chunk:
                if blob is None:
                    index.update_attributes(seq, status=status, kind=kind)
                else:
                    vector = np.frombuffer(blob, dtype=np.float32)
                    fresh.append(IndexRow(seq, tenant_id, user_id, agent_id, session_id, status, kind, vector))
            index.upsert(fresh)

    def size_bytes(self, tx: Tx) -> int | None:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())

    def find_traces(self, needles: Sequence[str]) -> dict[str, list[str]]:
        """Scans the bytes of the database file and its WAL for each string, and asks the keyword index for it
        as a phrase (FTS5 stores terms prefix-compressed, so a live term need not appear whole in the file;
        terms of deleted rows are merged out of the index by ``scrub``)."""
        places: dict[str, list[str]] = {}
        for label, file in (("database file", self.path), ("write-ahead log", Path(f"{self.path}-wal"))):
            if file.is_file() and file.stat().st_size:
                with file.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                    for needle in needles:
                        if data.find(needle.encode("utf-8")) != -1:
                            places.setdefault(needle, []).append(label)
        for needle in needles:
            if index_document(needle).strip() and self._matches(_quoted(index_document(needle))):
                places.setdefault(needle, []).append("keyword index")
        return places

    def _matches(self, phrase: str) -> bool:
        sql = "SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT 1"
        return self.read(lambda tx: tx.execute(sql, (phrase,)).fetchone()) is not None
