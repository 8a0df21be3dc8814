"""The SQLite backend's keyword search: FTS5's BM25 ranking answered from an in-memory copy of the index
(``storage/keyword_index.py``) once the store is large enough for FTS5's per-row cost to matter.

The copy catches up the way the vector index does (``sqlite/vectors.py``): every write bumps ``meta.rev``
and stamps the memories it touches, hard deletes list their seqs in ``vector_removals``, a reset changes
``index_epoch``. A change of ``search_terms`` (``memstrata reindex`` rewrote every row's terms without
stamping them) starts a new copy. The first copy of a large store is built in a thread; until it is ready,
and for a token FTS5 would match as a multi-term phrase, FTS5 answers. Filters on columns the copy does not
hold (metadata, keys, times) are checked in SQL on a wider candidate list (``SQLiteDialect.keyword_search``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from time import monotonic
from typing import Any

from memstrata.lexical import TermSplitter
from memstrata.storage.heap import release_free_heap
from memstrata.storage.keyword_index import KeywordIndex, KeywordRow
from memstrata.storage.sql.dialect import Tx
from memstrata.storage.vector_index import IndexFilter

log = logging.getLogger(__name__)
MIN_ROWS = 1_000  # the default store.keyword_cache_min_rows: the copy saved 0.4-1.2 ms a search at 1k rows (2 runs)
# A first copy of fewer rows is built inline (0.1 s); larger in a thread while FTS5 answers. Built inline, it held one
# search up (the slowest of a new process's searches 2-60: 147 ms at 3k rows, 276 at 10k); beside the searches, 47
# and 193 ms (bench/results/2026-12-07-keyword-copy-threshold{,-inline-build}.md).
SYNC_BUILD_ROWS = 2_000
SMALL_RECHECK_S = 5.0  # a store found too small for the copy is looked at again after this long
# A copy takes 0.06-0.1 s to build at 1k rows, 0.3-0.4 s at 10k, and saves 0.3-0.8 ms a keyword search there (a
# search asks two to four; a deep search more): a process that searches only a few times (one CLI command) would pay
# for it to no gain, so FTS5 answers its first ones. bench/results/2026-12-07-keyword-copy-threshold.md
FTS_ANSWERS_FIRST = 50
_CHANGES = (
    "SELECT m.seq, m.tenant_id, m.user_id, m.agent_id, m.session_id, m.status, m.kind, f.tokens FROM memories m "
    "LEFT JOIN memory_fts f ON f.rowid = m.seq WHERE m.rev > ?"
)
_ORIGIN_KEYS = ("store_id", "index_epoch", "search_terms")


class KeywordKeeper:
    """Owns one process's :class:`KeywordIndex` for one SQLite file. ``read`` runs an action on a reader
    connection inside one snapshot. ``min_rows``: stores with fewer memories are left to FTS5, and so are the
    first ``FTS_ANSWERS_FIRST`` searches of a process (0: always the copy, from the first search; tests)."""

    def __init__(self, *, min_rows: int, read: Callable[[Callable[[Tx], Any]], Any]) -> None:
        self.min_rows = min_rows
        self._read = read
        self._splitter = TermSplitter()
        self._lock = threading.Lock()  # held while the copy changes and while it is searched (1-5 ms at 1M rows)
        self._index: KeywordIndex | None = None
        self._origin: tuple[str, ...] | None = None
        self._rev = -1
        self._builder: threading.Thread | None = None
        self._closed = False
        self._small_until = 0.0  # monotonic time until which the store is taken as too small for the copy
        self._fts_answered = 0  # keyword searches FTS5 answered before a first copy (FTS_ANSWERS_FIRST)

    # --- searching ---------------------------------------------------------------------------------
    def search(self, tokens: Sequence[str], where: IndexFilter, limit: int) -> list[tuple[int, float]] | None:
        """(seq, bm25 score) of the ``limit`` best rows passing ``where``, as FTS5 ranks them; None when the
        copy cannot answer (not built yet, too small a store, or a phrase token): ask FTS5."""
        if self._closed or monotonic() < self._small_until:
            return None  # the usual small store: no read of the database on its way to FTS5
        if self._index is None and self.min_rows and self._fts_answered < FTS_ANSWERS_FIRST:
            self._fts_answered += 1  # (a race here only builds one search sooner or later)
            return None
        with self._lock:
            index = self._read(self._catch_up)
            term_ids = None if index is None else index.phrases(tokens)
            return None if index is None or term_ids is None else index.search(term_ids, where, limit)

    def synced(self) -> bool:
        """Catch up (or start the first build); True when the copy is ready to answer."""
        with self._lock:
            return self._read(self._catch_up) is not None

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for a first build in progress (benchmarks, tests); True when none is running."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout_s)
        return builder is None or not builder.is_alive()

    def stats(self) -> dict[str, Any]:
        index = self._index
        building = self._builder is not None and self._builder.is_alive()
        return {"rows": len(index) if index else 0, "building": building, "min_rows": self.min_rows}

    def close(self) -> None:
        self._closed = True  # a build stops at its next batch
        self.wait(timeout_s=60)

    # --- keeping up with the database --------------------------------------------------------------
    def _catch_up(self, tx: Tx) -> KeywordIndex | None:
        meta = dict(tx.execute("SELECT key, value FROM meta").fetchall())
        origin = tuple(str(meta.get(key, "")) for key in _ORIGIN_KEYS)
        rev = int(meta["rev"])
        if self._index is None or self._origin != origin:
            self._index = None
            if self._builder is not None and self._builder.is_alive():
                return None  # the first copy is on its way
            rows = self._row_bound(tx)
            if rows < self.min_rows:
                self._small_until = monotonic() + SMALL_RECHECK_S
                return None
            if rows >= SYNC_BUILD_ROWS:
                self._builder = threading.Thread(target=self._build, args=(origin,), name="memstrata-keywords",
                                                 daemon=True)  # fmt: skip
                self._builder.start()
                return None
            self._index, self._origin, self._rev = KeywordIndex(self._splitter), origin, -1
        index = self._index
        if rev > self._rev:
            _apply_changes(tx, index, self._rev)
            self._rev = rev
        return index

    @staticmethod
    def _row_bound(tx: Tx) -> int:
        """The highest seq: an upper bound of the row count read from the primary key alone (a count(*)
        would scan the table on every search of a store too small for the copy)."""
        return int(tx.execute("SELECT coalesce(max(seq), 0) FROM memories").fetchone()[0])

    def _build(self, origin: tuple[str, ...]) -> None:
        """The first copy, outside the lock: searches go on with FTS5 meanwhile, then it is adopted and caught
        up on whatever was written while it was built."""
        try:

            def load(tx: Tx) -> tuple[KeywordIndex, int, tuple[str, ...]]:
                meta = dict(tx.execute("SELECT key, value FROM meta").fetchall())
                index = KeywordIndex(self._splitter)
                _apply_changes(tx, index, -1, cancelled=lambda: self._closed)
                index.compact()
                return index, int(meta["rev"]), tuple(str(meta.get(key, "")) for key in _ORIGIN_KEYS)

            index, rev, built_for = self._read(load)
            with self._lock:
                if self._closed or built_for != origin:
                    return  # reset or reindexed meanwhile: the next search starts again
                self._index, self._origin, self._rev = index, origin, rev
            release_free_heap()
        except Exception:  # a cache that failed to build: FTS5 keeps answering, and the next search tries again
            if not self._closed:  # closing cancels a build on purpose
                log.warning("could not build the in-memory keyword index", exc_info=True)


def _apply_changes(tx: Tx, index: KeywordIndex, since: int, cancelled: Callable[[], bool] = lambda: False) -> None:
    """Removals after rev ``since``, then every memory stamped after it (a seq SQLite reuses after a delete is
    removed, then added again)."""
    removed = tx.execute("SELECT seq FROM vector_removals WHERE rev > ?", (since,)).fetchall()
    index.remove(seq for (seq,) in removed)
    cursor = tx.execute(_CHANGES, (since,))
    while chunk := cursor.fetchmany(10_000):
        if cancelled():
            raise RuntimeError("closed while building")
        index.upsert(KeywordRow(seq, tuple(attrs), tokens or "") for seq, *attrs, tokens in chunk)
