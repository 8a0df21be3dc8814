"""The SQLite dialect: one file shared by processes; per store, one writer connection and a pool of reader
connections (WAL lets readers run beside each other and beside the writer, so a search never waits for
another search); FTS5 for keywords and an in-process index for vectors (``sqlite/vectors.py``; this
Python's sqlite3 cannot load sqlite-vec)."""

from __future__ import annotations

import json
import queue
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from memstrata.errors import StoreError
from memstrata.indexing import keyword_text
from memstrata.lexical import SEARCH_TERMS_VERSION, index_document
from memstrata.query import Filters
from memstrata.storage import vector_blobs
from memstrata.storage.protocol import ScoredId, Vector
from memstrata.storage.sql.dialect import Tx, duplicate_error
from memstrata.storage.sql.schema import upgrade
from memstrata.storage.sql.where import Where, memory_where, scope_where
from memstrata.storage.sqlite import keywords
from memstrata.storage.sqlite.connection import connect, damage_error, retry_locked, shrink_wal
from memstrata.storage.sqlite.keywords import KeywordKeeper
from memstrata.storage.sqlite.prefilter import PrefilterCache
from memstrata.storage.sqlite.schema_migrations import LEDGER, MIGRATIONS, run_script
from memstrata.storage.sqlite.vectors import IndexKeeper, exact_scores
from memstrata.storage.vector_index import IndexFilter
from memstrata.types import MemoryItem, Scope, as_utc

T = TypeVar("T")
# Every write bumps meta.rev and stamps the memories it touches with it, so each process's vector index
# catches up on rows with a newer rev; hard deletes record the seqs in vector_removals (sqlite/vectors.py).
_REV = "(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'rev')"
_BUMP_REV = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'rev'"
_LONG_LIST = 100  # longer IN lists travel as one JSON parameter
_RESCORE_MARGIN = 16  # candidates beyond the limit rescored exactly, so int8 rounding never decides a cut
_POST_FILTER_FACTOR = 16  # candidates checked in SQL against a metadata/time filter: enough for one row in ~12


def _index_filter(scope: Scope, filters: Filters, allowed: np.ndarray | None = None) -> IndexFilter:
    return IndexFilter(
        tenant_id=scope.tenant_id or "",
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        session_id=scope.session_id,
        statuses=[status.value for status in filters.status],
        kinds=filters.kind,
        excluded_kinds=filters.exclude_kind,
        allowed_seqs=allowed,
    )


def _best(rows: list[Any], vector: Vector, limit: int) -> list[ScoredId]:
    return [ScoredId(memory_id, score) for memory_id, score in exact_scores(rows, vector)[:limit]]


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
    terms_version = SEARCH_TERMS_VERSION  # FTS5 stems the stored tokens itself

    def __init__(self, path: Path, *, busy_timeout_s: float, file_mode: int | None, readers: int = 8,
                 ann_min_rows: int = 20_000, keyword_cache_min_rows: int = keywords.MIN_ROWS) -> None:  # fmt: skip
        self.path = path
        self.location = str(path)
        self._timeout = busy_timeout_s
        self._file_mode = file_mode
        self._write_lock = threading.RLock()  # the one writer connection; SQLite serialises writers across processes
        self._conn = connect(path, busy_timeout_s=busy_timeout_s, file_mode=file_mode)
        self._readers: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._reader_slots = threading.BoundedSemaphore(readers)
        self._all_readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self.vectors = IndexKeeper(path, ann_min_rows=ann_min_rows, file_mode=file_mode, read=self._snapshot)
        self.keywords = KeywordKeeper(min_rows=keyword_cache_min_rows, read=self._snapshot)
        self.prefilter = PrefilterCache()

    def migrate(self) -> int:
        return self.transaction(lambda tx: upgrade(self, tx, LEDGER, MIGRATIONS, run_script))

    # --- connections ---------------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        try:
            return self._readers.get_nowait()
        except queue.Empty:
            # 8 MiB: a search reads a few pages per hit; the OS keeps the file's pages anyway, and at 1M memories
            # each reader's cache filled (16 MiB) to no gain in latency (bench/scale.py's 1M store, 50 queries)
            conn = connect(self.path, busy_timeout_s=self._timeout, file_mode=self._file_mode, cache_mib=8)
            with self._readers_lock:
                self._all_readers.append(conn)
            return conn

    def read(self, action: Callable[[Tx], T]) -> T:
        """``action`` on a pooled reader connection: at most ``readers`` at once, the rest wait for one."""
        if not self._reader_slots.acquire(timeout=self._timeout):
            raise StoreError(f"no database reader was free for {self._timeout:.0f} s; raise store.pool_size")
        try:
            conn = self._reader()
            try:
                return retry_locked(lambda: action(conn), timeout_s=self._timeout)
            except sqlite3.DatabaseError as exc:
                damaged = damage_error(exc)
                if damaged is None:
                    raise
                raise damaged from None
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                self._readers.put(conn)
        finally:
            self._reader_slots.release()

    def _snapshot(self, action: Callable[[Tx], T]) -> T:
        """``action`` inside one read transaction: every query in it sees the same committed state."""

        def run(tx: Tx) -> T:
            tx.execute("BEGIN")
            try:
                return action(tx)
            finally:
                tx.execute("COMMIT")

        return self.read(run)

    def transaction(self, action: Callable[[Tx], T]) -> T:
        """BEGIN IMMEDIATE takes the write lock up front, so two writers queue on the busy timeout instead of
        failing on a lock upgrade."""
        with self._write_lock:
            retry_locked(lambda: self._conn.execute("BEGIN IMMEDIATE"), timeout_s=self._timeout)
            try:
                result = action(self._conn)
                self._conn.execute("COMMIT")
            except sqlite3.IntegrityError as exc:
                self._conn.execute("ROLLBACK")
                table = re.search(r"UNIQUE constraint failed: (\w+)\.id$", str(exc))
                raise duplicate_error(table and table[1], str(exc)) from None
            except sqlite3.DatabaseError as exc:
                with suppress(sqlite3.Error):  # on a damaged file the rollback may fail too: the cause is said below
                    self._conn.execute("ROLLBACK")
                damaged = damage_error(exc)
                if damaged is None:
                    raise
                raise damaged from None
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            shrink_wal(self._conn, self.path, busy_timeout_s=self._timeout)
            return result

    def close(self) -> None:
        self.vectors.close()
        self.keywords.close()
        with self._write_lock:
            self._conn.close()
        with self._readers_lock:
            for conn in self._all_readers:
                conn.close()
            self._all_readers.clear()

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
        return vector_blobs.encode(vector)

    def from_vector(self, value: Any) -> Vector:
        return vector_blobs.decode(value)

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
        # JSON's own types, as PostgreSQL's containment compares them: true is not 1, "1" is not 1 (json_extract
        # reads true as 1, so a filter of 1 matched true here and not there; found by a user trial)
        if isinstance(value, bool):
            return f"json_type({column}, ?) = ?", [path, "true" if value else "false"]
        kinds = "'integer', 'real'" if isinstance(value, int | float) else "'text'"
        return f"(json_extract({column}, ?) = ? AND json_type({column}, ?) IN ({kinds}))", [path, value, path]

    # --- bookkeeping: the FTS5 table (rowid = memories.seq) and the vector index's counters ------------
    def begin_batch(self, tx: Tx) -> None:
        tx.execute(_BUMP_REV)

    def index_memories(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        tx.executemany("DELETE FROM memory_fts WHERE rowid = (SELECT seq FROM memories WHERE id = ?)",
                       [(item.id,) for item in items])  # fmt: skip
        tx.executemany("INSERT INTO memory_fts (rowid, tokens) SELECT seq, ? FROM memories WHERE id = ?",
                       [(index_document(keyword_text(item)), item.id) for item in items])  # fmt: skip

    def reindex_keywords(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        self.index_memories(tx, items)  # the FTS5 row only: rev stays, so no vector index re-reads these rows

    def drop_memories(self, tx: Tx, seqs: Sequence[int] | None) -> dict[str, int]:
        if seqs is None:  # everything: every process rebuilds its vector index
            tx.execute("DELETE FROM vector_removals")
            tx.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'index_epoch'")
            return {"memory_fts": tx.execute("DELETE FROM memory_fts").rowcount}
        if not seqs:
            return {"memory_fts": 0}
        tx.execute(_BUMP_REV)
        tx.execute(
            f"INSERT INTO vector_removals (seq, rev) SELECT value, {_REV} FROM json_each(?) "
            "WHERE true ON CONFLICT (seq) DO UPDATE SET rev = excluded.rev",
            (json.dumps(list(seqs)),),
        )
        condition, params = self.in_("rowid", seqs)
        return {"memory_fts": tx.execute(f"DELETE FROM memory_fts WHERE {condition}", params).rowcount}

    def lock_claims(self, tx: Tx) -> None:
        return None  # BEGIN IMMEDIATE: one claimer at a time already

    def snapshot(self, tx: Tx) -> None:
        return None  # BEGIN IMMEDIATE: no other writer commits until this transaction ends

    def on_embedding_id(self, tx: Tx, embedding_id: str) -> None:
        return None

    def scrub(self) -> None:
        """FTS5 keeps deleted terms in old index segments until they are merged: 'optimize' merges them all
        away (secure_delete zeroes the freed pages), then the WAL's old page images are checkpointed away."""
        self.transaction(lambda tx: tx.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')"))
        self.read(lambda tx: tx.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
        self.vectors.discard_files()  # rebuilt without the deleted rows on the next graph build or open

    def compact(self) -> None:
        self.read(lambda tx: tx.execute("VACUUM"))
        self.read(lambda tx: tx.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    def before_copy(self, tx: Tx) -> None:
        return None

    def after_copy(self, tx: Tx) -> None:
        return None

    # --- search and whole-store -----------------------------------------------------------------
    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        """FTS5's BM25 ranking (higher is better), from the in-memory copy where it can answer (a large store),
        else from FTS5 itself. The copy masks scope, status and kind; its hits are checked against the scope
        and the filters again in SQL (it is a cache, and it does not hold metadata, keys or times). With such a
        filter the copy ranks the rows passing it when they are listed already (:mod:`.prefilter`), else it is
        asked for a generous candidate list: when enough pass, they are the exact best (any better passing row
        would be among the candidates); when too few pass of a full list, the passing rows are listed."""
        row_filter = filters.needs_row_filter()
        checked = memory_where(self, scope, filters, by_key=True)
        allowed = self._listed(scope, filters) if row_filter else None
        if allowed is None:
            ask = max(limit * _POST_FILTER_FACTOR, 256) if row_filter else limit
            found = self.keywords.search(tokens, _index_filter(scope, filters), ask)
            if found is None:
                return self._fts(scope, tokens, filters, limit)
            hits = self._ids_for(found, checked)
            if len(hits) >= limit or len(found) < ask:
                return hits[:limit]
            if not row_filter:  # the copy returned rows the file no longer holds in this scope
                return self._fts(scope, tokens, filters, limit)
            allowed = self._passing(scope, filters)
        found = self.keywords.search(tokens, _index_filter(scope, filters, allowed), limit)
        return self._ids_for(found, checked) if found is not None else self._fts(scope, tokens, filters, limit)

    def _fts(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        where = memory_where(self, scope, filters)
        return self.read(lambda tx: self._fts_search(tx, tokens, where, limit))

    def _listed(self, scope: Scope, filters: Filters) -> np.ndarray | None:
        """The rows passing ``filters`` when a search listed them before (brought up to date), else None."""
        return self._passing(scope, filters) if self.prefilter.knows(memory_where(self, scope, filters)) else None

    def _passing(self, scope: Scope, filters: Filters) -> np.ndarray:
        """Seqs of the scope's rows passing ``filters`` (:mod:`.prefilter`: kept per filter, updated by rev)."""
        where = memory_where(self, scope, filters)
        return self._snapshot(lambda tx: self.prefilter.passing(tx, where))

    @staticmethod
    def _fts_search(tx: Tx, tokens: Sequence[str], where: Where, limit: int) -> list[ScoredId]:
        found = tx.execute(
            "SELECT m.id, bm25(memory_fts) AS rank FROM memory_fts JOIN memories m ON m.seq = memory_fts.rowid "
            f"WHERE memory_fts MATCH ? AND {where.sql()} ORDER BY rank LIMIT ?",
            (" OR ".join(map(_quoted, tokens)), *where.params, limit),
        ).fetchall()
        return [ScoredId(memory_id, -float(rank)) for memory_id, rank in found]

    def _ids_for(self, found: list[tuple[int, float]], where: Where) -> list[ScoredId]:
        if not found:
            return []
        condition, params = self.in_("m.seq", [seq for seq, _ in found])
        sql = f"SELECT m.seq, m.id FROM memories m WHERE {condition} AND {where.sql()}"
        ids = dict(self.read(lambda tx: tx.execute(sql, (*params, *where.params)).fetchall()))
        return [ScoredId(ids[seq], score) for seq, score in found if seq in ids]

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]:
        """Candidates from the index, rescored with the stored float16 vectors, the scope checked again in SQL (the
        index is a cache). Filters on columns the index does not hold (metadata, key, times): the index searches
        the rows passing the filter when they are listed already (:mod:`.prefilter`); else a generous candidate
        list is checked in SQL first, and only when too few pass are the passing rows listed."""
        want = limit + _RESCORE_MARGIN
        if not filters.needs_row_filter():
            found = self.vectors.candidates(vector, _index_filter(scope, filters), want)
            return _best(self._rows_for(found, scope_where(self, scope, by_key=True)), vector, limit)
        checked = memory_where(self, scope, filters, by_key=True)
        allowed = self._listed(scope, filters)
        if allowed is None:
            ask = max(want * _POST_FILTER_FACTOR, 256)
            found = self.vectors.candidates(vector, _index_filter(scope, filters), ask)
            passing = self._rows_for(found, checked)
            if len(passing) >= want or len(found) < ask:  # enough, or every row of the scope was a candidate
                return _best(passing, vector, limit)
            allowed = self._passing(scope, filters)
        found = self.vectors.candidates(vector, _index_filter(scope, filters, allowed), want)
        return _best(self._rows_for(found, checked), vector, limit)

    def _rows_for(self, found: list[tuple[int, float]], where: Where) -> list[Any]:
        """(seq, id, vector BLOB) of the candidates that pass ``where``."""
        if not found:
            return []
        condition, params = self.in_("m.seq", [seq for seq, _ in found])
        sql = (
            f"SELECT m.seq, m.id, v.vector FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq "
            f"WHERE {condition} AND {where.sql()}"
        )
        return self.read(lambda tx: tx.execute(sql, (*params, *where.params)).fetchall())

    def size_bytes(self, tx: Tx) -> int | None:
        files = [*self.path.parent.glob(self.path.name + "*"), *self.vectors.folder.glob("*")]
        return sum(p.stat().st_size for p in files if p.is_file())

    def find_traces(self, needles: Sequence[str]) -> dict[str, list[str]]:
        """Scans the bytes of the database file and its WAL for each string, and asks the keyword index for it
        as a phrase (FTS5 stores terms prefix-compressed, so a live term need not appear whole in the file;
        terms of deleted rows are merged out of the index by ``scrub``)."""
        files = [(label, str(file)) for label, file in (("database file", self.path),
                 ("write-ahead log", Path(f"{self.path}-wal"))) if file.is_file() and file.stat().st_size]  # fmt: skip
        places = _scan_bytes(files, needles)
        for needle in needles:
            if index_document(needle).strip() and self._matches(_quoted(index_document(needle))):
                places.setdefault(needle, []).append("keyword index")
        return places

    def _matches(self, phrase: str) -> bool:
        sql = "SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT 1"
        return self.read(lambda tx: tx.execute(sql, (phrase,)).fetchone()) is not None


# Run in a child process: closing any descriptor of the database file in this process drops every POSIX lock
# SQLite holds on it (fcntl locks belong to the process), so another process could then delete the WAL under
# this one's open connections, and writes acknowledged after an erase were lost.
_SCAN = """
import json, mmap, sys
job, found = json.load(sys.stdin), {}
for label, path in job["files"]:
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for needle in job["needles"]:
                if data.find(needle.encode("utf-8")) != -1:
                    found.setdefault(needle, []).append(label)
    except (FileNotFoundError, ValueError):  # gone since, or emptied (no bytes to map)
        pass
json.dump(found, sys.stdout)
"""


def _scan_bytes(files: list[tuple[str, str]], needles: Sequence[str]) -> dict[str, list[str]]:
    """Which (label, path) files hold each needle's UTF-8 bytes, read by a child process (see _SCAN)."""
    if not files or not needles:
        return {}
    job = json.dumps({"files": files, "needles": list(needles)})
    done = subprocess.run([sys.executable, "-I", "-c", _SCAN], input=job, capture_output=True, text=True,
                          check=False, timeout=600)  # fmt: skip
    if done.returncode != 0:
        raise StoreError(f"could not scan the database files for erased text: {done.stderr.strip()[-300:]}")
    found: dict[str, list[str]] = json.loads(done.stdout)
    return found
