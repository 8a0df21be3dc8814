"""An in-process vector index, derived from the store and rebuilt from it at will.

This Python's sqlite3 cannot load sqlite-vec, so vectors live in the database as float16 BLOBs (the
source of truth) and this index keeps, per row (a *position*), the memory's seq and integer codes for its
scope, status and kind (:mod:`.row_table`) and its vector as int8 (:mod:`.compact_rows`). The scope filter
is a vectorised mask applied *before* ranking: another scope's rows are never scored, let alone returned.

Search picks candidates here and the store rescores them with the stored vectors:

- few matching rows (under ``ann_min_rows``): an exact int8 scan of just those rows;
- many: the HNSW graph (:mod:`.ann`) for rows in its snapshot, filtered as it returns them and asked
  again for more when too few pass, plus an exact scan of rows added or changed since the snapshot.

Positions are append-only: a removed row keeps its position with the status code ``REMOVED`` until the
next rebuild from the store, so the graph's positions stay valid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.storage.ann import AnnGraph
from memstrata.storage.compact_rows import CompactRows, Int8Rows, Positions, exact_top, quantize
from memstrata.storage.protocol import Vector
from memstrata.storage.row_table import ATTRS, IndexFilter, RowTable

__all__ = ["IndexFilter", "IndexRow", "Snapshot", "VectorIndex"]
_MAX_ASK = 4096  # most candidates asked of the graph; a filter passing fewer rows than that needs is scanned exactly


@dataclass(frozen=True)
class IndexRow:
    seq: int
    tenant_id: str
    user_id: str
    agent_id: str
    session_id: str
    status: str
    kind: str
    vector: Vector


@dataclass(frozen=True)
class Snapshot:
    """What :mod:`.index_files` persists: every array of the index, as of one moment."""

    seqs: npt.NDArray[np.int32]
    attrs: npt.NDArray[np.integer[Any]]  # (rows, len(ATTRS)) codes
    codes: dict[str, list[str]]
    rows: CompactRows
    size: int
    dirty: list[int]
    graph: AnnGraph | None


class VectorIndex:
    def __init__(self, dims: int, rows: CompactRows | None = None) -> None:
        self.dims = dims
        self.rows = rows or CompactRows(dims)
        self._table = RowTable()
        self.ann: AnnGraph | None = None
        # Positions whose vector changed in place, with the change's tick: a graph built before the change
        # holds the old vector, so such positions are scanned exactly beside it.
        self._changed_at: dict[int, int] = {}
        self.tick = 0

    @classmethod
    def restore(cls, dims: int, seqs: npt.NDArray[np.integer[Any]], attrs: npt.NDArray[np.integer[Any]],
                codes: dict[str, list[str]], rows: CompactRows) -> VectorIndex:  # fmt: skip
        index = cls(dims, rows)
        index._table = RowTable.restore(seqs, attrs, codes)
        return index

    @property
    def _size(self) -> int:
        return self._table.size

    def __len__(self) -> int:
        """Positions, removed ones included."""
        return self._size

    def snapshot(self) -> Snapshot:
        seqs, attrs, codes = self._table.snapshot()
        return Snapshot(seqs, attrs, codes, self.rows, len(seqs), self.dirty, self.ann)

    def mark_changed(self, positions: Iterable[int]) -> None:
        """Positions whose vector differs from the graph's copy (a persisted index's, on load)."""
        self.tick += 1
        self._changed_at.update((int(position), self.tick) for position in positions)

    @property
    def dirty(self) -> list[int]:
        """Positions in the graph whose vector changed after its snapshot."""
        size = self.ann.size if self.ann else 0
        return [position for position in self._changed_at if position < size]

    def fresh_rows(self) -> int:
        """Rows searched exactly beside the graph (added or changed since its snapshot)."""
        return self._size - (self.ann.size if self.ann else 0) + len(self.dirty)

    # --- changes ---------------------------------------------------------------------------------
    def position(self, seq: int) -> int:
        return self._table.position(seq)

    def _codes_of(self, row: IndexRow) -> list[int]:
        return self._table.encode([getattr(row, name) for name in ATTRS])

    def upsert(self, rows: Iterable[IndexRow]) -> None:
        self.tick += 1
        fresh: list[IndexRow] = []
        for row in rows:
            position = self.position(row.seq)
            if position < 0:
                fresh.append(row)
                continue
            self._table.set_codes(position, self._codes_of(row))
            self.rows.set(position, quantize(row.vector))
            self._changed_at[position] = self.tick
        if not fresh:
            return
        # New rows are appended in one block: a cold load of a large store stays vectorised.
        start = self.rows.append(quantize(np.stack([row.vector for row in fresh])))
        first = self._table.append([row.seq for row in fresh], [self._codes_of(row) for row in fresh])
        assert first == start, "a vector row and its table row share one position"

    def update_attributes(self, seq: int, *, status: str, kind: str) -> None:
        """Follow a status or kind change of a row whose vector did not change."""
        position = self.position(seq)
        if position >= 0:
            self._table.set_status_kind(position, status, kind)

    def remove(self, seqs: Iterable[int]) -> None:
        """Rows deleted from the store: their positions never match a filter again."""
        for seq in seqs:
            position = self.position(seq)
            if position >= 0:
                self._table.retire(position)
                self._table.unmap(seq)
                self._changed_at.pop(position, None)

    # --- search ----------------------------------------------------------------------------------
    def search(self, query: Vector, where: IndexFilter, count: int, *, ann_min_rows: int) -> list[tuple[int, float]]:
        """About the ``count`` best (seq, int8 cosine) among rows passing ``where``, best first: candidates
        for the caller to rescore exactly. The graph is used when at least ``ann_min_rows`` rows pass."""
        n = self._size
        if n == 0 or count <= 0:
            return []
        mask = self._table.mask(where, n)
        matching = int(np.count_nonzero(mask))
        if matching == 0:
            return []
        q = quantize(query)
        ann = self.ann
        if ann is None or matching < ann_min_rows:
            positions = np.flatnonzero(mask)
            keys, scores = exact_top(self.rows.gather(positions), q, count)
            return self._ranked(positions[keys], scores)
        found = [self._from_graph(ann, q, mask, count)]
        fresh = np.flatnonzero(mask[ann.size :]) + ann.size
        dirty = [p for p in self.dirty if p < n and mask[p]]
        if fresh.size or dirty:
            found.append(np.concatenate([np.asarray(sorted(dirty), dtype=np.int64), fresh]))
        positions = np.unique(np.concatenate(found))
        keys, scores = exact_top(self.rows.gather(positions), q, count)  # one exact pass over the union
        return self._ranked(positions[keys], scores)

    def _from_graph(self, ann: AnnGraph, q: Int8Rows, mask: npt.NDArray[np.bool_], count: int) -> Positions:
        """Graph candidates passing ``mask``: ask for enough that ``count`` should pass, more if they did not."""
        in_graph = mask[: ann.size]
        passing = int(np.count_nonzero(in_graph))
        if passing == 0:
            return np.zeros(0, dtype=np.int64)
        ask = int(np.ceil(count * ann.size / passing * 1.25)) + 16
        while ask <= _MAX_ASK:
            positions = ann.search(q, ask)
            kept = positions[in_graph[positions]]
            if kept.size >= count or ask >= ann.size:
                return kept
            ask *= 4
        return np.flatnonzero(in_graph)  # a filter this selective: its rows are few enough to scan

    def _ranked(self, positions: Positions, scores: npt.NDArray[np.float32]) -> list[tuple[int, float]]:
        order = np.argsort(-scores, kind="stable")
        seqs = self._table.seqs
        return [(int(seqs[positions[i]]), float(scores[i])) for i in order]

    def graph_input(self) -> tuple[CompactRows, int, int]:
        """What a graph build reads: the rows, how many of them (a stable prefix: positions only grow) and the
        tick it starts at."""
        return self.rows, self._size, self.tick

    def adopt(self, ann: AnnGraph, started_at: int) -> None:
        """Install a graph built over ``[0, ann.size)`` from rows read after tick ``started_at``; rows changed
        since may be in it with their old vector, and stay scanned exactly."""
        self.ann = ann
        self._changed_at = {p: t for p, t in self._changed_at.items() if t > started_at}

    def stats(self) -> dict[str, Any]:
        return {"rows": self._size, "graph_rows": self.ann.size if self.ann else 0, "fresh_rows": self.fresh_rows()}
