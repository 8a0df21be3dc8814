"""The SQLite backend's vector search: the in-process index kept in step with the database, its graph built
and persisted, and candidates rescored with the float16 vectors the database keeps (:mod:`..vector_blobs`).

Every write bumps ``meta.rev`` and stamps the memories it touches with it; hard deletes also record the
removed seqs in ``vector_removals`` with their rev. Each process's index therefore catches up on exactly
the changes after its own rev, whichever process made them: removals first, then changed rows (a seq
SQLite reuses after a delete is removed, then added again). ``index_epoch`` changes only when the whole
store is reset, and then the index is rebuilt.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from memstrata.storage import index_files, vector_blobs
from memstrata.storage.ann import AnnGraph
from memstrata.storage.heap import release_free_heap
from memstrata.storage.index_files import Origin
from memstrata.storage.protocol import Vector
from memstrata.storage.sql.dialect import Tx
from memstrata.storage.vector_index import IndexFilter, IndexRow, VectorIndex

log = logging.getLogger(__name__)
SYNC_BUILD_ROWS = 5_000  # a graph over fewer rows is built inline (well under a second); larger ones in a thread
_CHANGES = (
    "SELECT m.seq, m.tenant_id, m.user_id, m.agent_id, m.session_id, m.status, m.kind, v.vector FROM memories m "
    "LEFT JOIN memory_vectors v ON v.memory_seq = m.seq AND v.embedding_id = ? WHERE m.rev > ?"
)


# Keepers with a graph build running on a daemon thread. A daemon thread left inside usearch when the interpreter
# exits aborts the process ("terminate called without an active exception", exit 134): a script that never closed
# its Memory after damaged index files were rebuilt died so, its answer printed (found by a hardening run).
_BUILDING: weakref.WeakSet[IndexKeeper] = weakref.WeakSet()


@atexit.register
def _stop_builds_at_exit() -> None:
    for keeper in list(_BUILDING):
        keeper.close()


class IndexKeeper:
    """Owns one process's :class:`VectorIndex` for one SQLite file. ``read`` runs an action on a reader
    connection inside one snapshot (BEGIN ... COMMIT)."""

    def __init__(self, db_path: Path, *, ann_min_rows: int, file_mode: int | None,
                 read: Callable[[Callable[[Tx], Any]], Any]) -> None:  # fmt: skip
        self.folder = index_files.directory_for(db_path)
        self.ann_min_rows = ann_min_rows
        self._file_mode = file_mode
        self._read = read
        self._lock = threading.Lock()  # held while the index changes; searches run beside it
        self._index: VectorIndex | None = None
        self._origin: tuple[str, str, str] | None = None
        self._rev = -1
        self._builder: threading.Thread | None = None
        self._build_lock = threading.Lock()  # one decision at a time about starting a build
        self._build_threads = 1  # a background build leaves the other cores to requests
        self._closed = False

    # --- keeping up with the database --------------------------------------------------------------
    def synced(self) -> VectorIndex | None:
        with self._lock:
            index: VectorIndex | None = self._read(self._catch_up)
        if index is not None:
            self._maybe_build(index)
        return index

    def _catch_up(self, tx: Tx) -> VectorIndex | None:
        meta = dict(tx.execute("SELECT key, value FROM meta").fetchall())
        embedding_id = meta.get("embedding_id")
        if embedding_id is None:
            return None
        origin = (str(meta.get("store_id", "")), str(embedding_id), str(meta["index_epoch"]))
        rev = int(meta["rev"])
        if self._index is None or self._origin != origin:
            self._index, self._rev = self._open(origin, rev)
            self._origin = origin
        index = self._index
        if rev > self._rev:
            removed = tx.execute("SELECT seq FROM vector_removals WHERE rev > ?", (self._rev,)).fetchall()
            index.remove(seq for (seq,) in removed)
            cursor = tx.execute(_CHANGES, (embedding_id, self._rev))
            while chunk := cursor.fetchmany(50_000):
                fresh = []
                for seq, tenant_id, user_id, agent_id, session_id, status, kind, blob in chunk:
                    if blob is None:
                        index.update_attributes(seq, status=status, kind=kind)
                    else:
                        vector = vector_blobs.decode(blob)
                        fresh.append(IndexRow(seq, tenant_id, user_id, agent_id, session_id, status, kind, vector))
                index.upsert(fresh)
            self._rev = rev
        return index

    def _open(self, origin: tuple[str, str, str], rev: int) -> tuple[VectorIndex, int]:
        """The persisted index when it matches this store (caught up from its rev), else an empty one (from -1)."""
        dims = int(origin[1].rsplit(":", 1)[1])
        if origin[0] and self.folder.is_dir():
            loaded = index_files.load(self.folder, Origin(*origin, rev=rev))
            if loaded is not None and loaded[0].dims == dims:
                release_free_heap()
                return loaded
        return VectorIndex(dims), -1

    # --- the graph -----------------------------------------------------------------------------------
    def _needs_graph(self, index: VectorIndex) -> bool:
        if len(index) == 0 or len(index) < self.ann_min_rows:
            return False
        return index.ann is None or index.fresh_rows() > self.ann_min_rows

    def _maybe_build(self, index: VectorIndex) -> None:
        with self._build_lock:
            if not self._needs_graph(index) or (self._builder is not None and self._builder.is_alive()):
                return
            if len(index) < SYNC_BUILD_ROWS:
                self._build(index)
                return
            # Searches go on exactly (over the rows the graph lacks) while the graph is built beside them.
            self._builder = threading.Thread(target=self._build, args=(index,), name="memstrata-vector-graph",
                                             daemon=True)  # fmt: skip
            _BUILDING.add(self)
            self._builder.start()

    def _build(self, index: VectorIndex) -> None:
        try:
            rows, size, tick = index.graph_input()
            graph = AnnGraph.build(rows, size, threads=lambda: self._build_threads,
                                   cancelled=lambda: self._closed or self._index is not index)  # fmt: skip
            with self._lock:
                if graph is None or self._index is not index or self._closed or self._origin is None:
                    return  # the store was reset or closed meanwhile
                index.adopt(graph, started_at=tick)
                snap, origin = index.snapshot(), Origin(*self._origin, rev=self._rev)
            if origin.store_id:
                index_files.save(self.folder, snap, origin, file_mode=self._file_mode)
                self._use_saved(index, origin)
            release_free_heap()
        except Exception:  # a cache that failed to build: searches stay exact, and the next one tries again
            log.warning("could not build the vector graph for %s", self.folder, exc_info=True)

    def _use_saved(self, built: VectorIndex, origin: Origin) -> None:
        """Search the files just saved, memory-mapped, instead of the index built in this process's own memory (at
        a million rows its graph and int8 rows are ~700 MB the writing process kept until it exited). Changes made
        since the snapshot are replayed from the database by the next search, as in a new process."""
        loaded = index_files.load(self.folder, origin)
        if loaded is None:
            return
        with self._lock:
            if self._index is built and not self._closed:
                self._index, self._rev = loaded

    def wait(self, timeout_s: float | None = None) -> bool:
        """Wait for a graph build in progress (benchmarks, tests); True when none is running."""
        builder = self._builder
        if builder is not None:
            self._build_threads = os.cpu_count() or 1  # someone is waiting for it: every core
            builder.join(timeout_s)
            self._build_threads = 1
        return builder is None or not builder.is_alive()

    # --- searching ---------------------------------------------------------------------------------
    def candidates(self, vector: Vector, where: IndexFilter, count: int) -> list[tuple[int, float]]:
        index = self.synced()
        if index is None:
            return []
        return index.search(np.asarray(vector, dtype=np.float32), where, count, ann_min_rows=self.ann_min_rows)

    def stats(self) -> dict[str, Any]:
        index = self._index
        building = self._builder is not None and self._builder.is_alive()
        return {**(index.stats() if index else {"rows": 0}), "building_graph": building, "folder": str(self.folder)}

    def discard_files(self) -> None:
        """After a hard delete: the persisted rows may hold vectors of deleted memories."""
        with self._lock:
            index_files.discard(self.folder)

    def close(self) -> None:
        self._closed = True  # a build in progress stops at its next chunk and saves nothing
        if not self.wait(timeout_s=60):  # a daemon thread left inside usearch at exit aborts the process
            log.warning("the vector graph build for %s did not stop within 60 s", self.folder)


def exact_scores(found: list[tuple[int, str, bytes]], vector: Vector) -> list[tuple[str, float]]:
    """(seq, id, vector BLOB) rows -> (id, cosine similarity with ``vector``), best first."""
    if not found:
        return []
    matrix = vector_blobs.decode_rows([blob for _, _, blob in found])
    query = np.asarray(vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    scores = (matrix @ query) / np.maximum(norms, 1e-12)
    order = np.argsort(-scores, kind="stable")
    return [(found[i][1], float(scores[i])) for i in order]
