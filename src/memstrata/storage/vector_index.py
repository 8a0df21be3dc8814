"""An in-process vector index, derived from the store and rebuilt from it at will.

This Python's sqlite3 cannot load sqlite-vec, so vectors live in the database as float16 BLOBs (the
source of truth) and this index keeps, per row (a *position*), the memory's seq, integer codes for its
scope, status and kind, and its vector as int8 (:mod:`.compact_rows`). The scope filter is a vectorised
mask applied *before* ranking: another scope's rows are never scored, let alone returned.

Search picks candidates here and the store rescores them with the stored vectors:

- few matching rows (under ``ann_min_rows``): an exact int8 scan of just those rows;
- many: the HNSW graph (:mod:`.ann`) for rows in its snapshot, filtered as it returns them and asked
  again for more when too few pass, plus an exact scan of rows added or changed since the snapshot.

Positions are append-only: a removed row keeps its position with the status code ``REMOVED`` until the
next rebuild from the store, so the graph's positions stay valid.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.storage.ann import AnnGraph
from memstrata.storage.compact_rows import CompactRows, Int8Rows, Positions, exact_top, quantize
from memstrata.storage.protocol import Vector

NO_CODE = -1  # a value the index has never seen: nothing can match it
REMOVED = -2  # the status code of a position whose row left the store
ATTRS = ("tenant_id", "user_id", "agent_id", "session_id", "status", "kind")
SeqMap = npt.NDArray[np.int32]  # a row's position by its seq, -1 for none (positions stay far below 2**31)
_MAX_ASK = 4096  # most candidates asked of the graph; a filter passing fewer rows than that needs is scanned exactly


class Codes:
    """Interns strings as small integers so filters become integer comparisons."""

    def __init__(self, values: Sequence[str] = ()) -> None:
        self._codes: dict[str, int] = {value: code for code, value in enumerate(values)}

    def code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes))

    def lookup(self, value: str) -> int:
        return self._codes.get(value, NO_CODE)

    def values(self) -> list[str]:
        return list(self._codes)


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
class IndexFilter:
    """Equality on scope columns (None = any; tenant always exact) plus allowed statuses and kinds."""

    tenant_id: str
    user_id: str | None
    agent_id: str | None
    session_id: str | None
    statuses: Sequence[str]
    kinds: Sequence[str] | None
    excluded_kinds: Sequence[str] = ()
    allowed_seqs: npt.NDArray[np.int64] | None = None  # from a SQL pre-filter on other columns


@dataclass(frozen=True)
class Snapshot:
    """What :mod:`.index_files` persists: every array of the index, as of one moment."""

    seqs: npt.NDArray[np.int64]
    attrs: npt.NDArray[np.int32]  # (rows, len(ATTRS))
    codes: dict[str, list[str]]
    rows: CompactRows
    size: int
    dirty: list[int]
    graph: AnnGraph | None


def row_mask(
    attrs: npt.NDArray[np.int32], codes: dict[str, Codes], where: IndexFilter, pos_by_seq: SeqMap
) -> npt.NDArray[np.bool_]:
    """Which of the rows ``attrs`` (codes per :data:`ATTRS`) pass ``where``; ``pos_by_seq`` maps a seq to its row."""
    n = attrs.shape[0]

    def column(name: str) -> npt.NDArray[np.int32]:
        return attrs[:, ATTRS.index(name)]

    mask: npt.NDArray[np.bool_] = column("tenant_id") == codes["tenant_id"].lookup(where.tenant_id)
    for name in ("user_id", "agent_id", "session_id"):
        value = getattr(where, name)
        if value is not None:
            mask &= column(name) == codes[name].lookup(value)
    mask &= np.isin(column("status"), [codes["status"].lookup(s) for s in where.statuses])
    if where.kinds is not None:
        mask &= np.isin(column("kind"), [codes["kind"].lookup(k) for k in where.kinds])
    if where.excluded_kinds:
        mask &= ~np.isin(column("kind"), [codes["kind"].lookup(k) for k in where.excluded_kinds])
    if where.allowed_seqs is not None:
        mask &= allowed_mask(where.allowed_seqs, pos_by_seq, n)
    return mask


def allowed_mask(seqs: npt.NDArray[np.int64], pos_by_seq: SeqMap, n: int) -> npt.NDArray[np.bool_]:
    """The first ``n`` rows, True where the row's seq is one of ``seqs``."""
    allowed = np.zeros(n, dtype=bool)
    positions = pos_by_seq[seqs[(seqs >= 0) & (seqs < pos_by_seq.size)]]
    allowed[positions[(positions >= 0) & (positions < n)]] = True
    return allowed


class FilterMasks:
    """Masks of recent filters over one index's rows, keyed by the version of the attributes they were
    computed from (the index bumps it after each change): a busy scope's searches skip comparing every row's
    codes again (about 1 ms at 100k rows, 10 ms at 1M). A search that overlapped a change files its mask
    under the old version, where no later search looks."""

    def __init__(self, size: int = 16) -> None:
        self._masks: OrderedDict[tuple[Any, ...], npt.NDArray[np.bool_]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def mask(self, version: int, attrs: npt.NDArray[np.int32], codes: dict[str, Codes], where: IndexFilter,
             pos_by_seq: SeqMap) -> npt.NDArray[np.bool_]:  # fmt: skip
        """:func:`row_mask` of ``attrs``; the scope part from the cache, a SQL pre-filter's seqs applied on it."""
        n = attrs.shape[0]
        if where.allowed_seqs is not None:
            scoped = self.mask(version, attrs, codes, replace(where, allowed_seqs=None), pos_by_seq)
            return scoped & allowed_mask(where.allowed_seqs, pos_by_seq, n)
        return self._cached(version, n, where, lambda: row_mask(attrs, codes, where, pos_by_seq))

    def _cached(self, version: int, n: int, where: IndexFilter,
                compute: Callable[[], npt.NDArray[np.bool_]]) -> npt.NDArray[np.bool_]:  # fmt: skip
        """The mask of a filter on scope, status and kind only (its key holds no SQL pre-filter seqs)."""
        assert where.allowed_seqs is None, "a pre-filter's seqs are applied on the cached mask, never cached"
        key = (version, n, where.tenant_id, where.user_id, where.agent_id, where.session_id,
               tuple(where.statuses), None if where.kinds is None else tuple(where.kinds),
               tuple(where.excluded_kinds))  # fmt: skip
        with self._lock:
            mask = self._masks.get(key)
            if mask is not None:
                self._masks.move_to_end(key)
                return mask
        mask = compute()
        mask.flags.writeable = False  # shared by concurrent searches
        with self._lock:
            self._masks[key] = mask
            while len(self._masks) > self._size:
                self._masks.popitem(last=False)
        return mask


class VectorIndex:
    def __init__(self, dims: int, rows: CompactRows | None = None) -> None:
        self.dims = dims
        self.rows = rows or CompactRows(dims)
        self._size = len(self.rows)
        self._seqs = np.zeros(max(self._size, 1024), dtype=np.int64)
        self._attrs = np.zeros((max(self._size, 1024), len(ATTRS)), dtype=np.int32)
        self._codes = {name: Codes() for name in ATTRS}
        self._pos_by_seq: SeqMap = np.full(1024, -1, dtype=np.int32)
        self.ann: AnnGraph | None = None
        # Positions whose vector changed in place, with the change's tick: a graph built before the change
        # holds the old vector, so such positions are scanned exactly beside it.
        self._changed_at: dict[int, int] = {}
        self.tick = 0
        self._masks = FilterMasks()
        self._version = 0  # bumped after every change of the rows' attributes

    @classmethod
    def restore(cls, dims: int, seqs: npt.NDArray[np.int64], attrs: npt.NDArray[np.int32],
                codes: dict[str, list[str]], rows: CompactRows) -> VectorIndex:  # fmt: skip
        index = cls(dims, rows)
        index._seqs[: len(seqs)] = seqs
        index._attrs[: len(seqs)] = attrs
        index._codes = {name: Codes(codes.get(name, [])) for name in ATTRS}
        live = attrs[:, ATTRS.index("status")] != REMOVED
        index._map(seqs[live], np.flatnonzero(live))
        return index

    def __len__(self) -> int:
        """Positions, removed ones included."""
        return self._size

    def snapshot(self) -> Snapshot:
        n = self._size
        codes = {name: self._codes[name].values() for name in ATTRS}
        return Snapshot(self._seqs[:n].copy(), self._attrs[:n].copy(), codes, self.rows, n, self.dirty, self.ann)

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
    def _map(self, seqs: npt.NDArray[np.int64], positions: npt.NDArray[np.int64]) -> None:
        if seqs.size:
            top = int(seqs.max())
            if top >= self._pos_by_seq.size:
                grown = np.full(max(top + 1, 2 * self._pos_by_seq.size), -1, dtype=np.int32)
                grown[: self._pos_by_seq.size] = self._pos_by_seq
                self._pos_by_seq = grown
            self._pos_by_seq[seqs] = positions

    def position(self, seq: int) -> int:
        return int(self._pos_by_seq[seq]) if 0 <= seq < self._pos_by_seq.size else -1

    def _codes_of(self, row: IndexRow) -> list[int]:
        return [self._codes[name].code(getattr(row, name)) for name in ATTRS]

    def upsert(self, rows: Iterable[IndexRow]) -> None:
        try:
            self._upsert(rows)
        finally:
            self._version += 1

    def _upsert(self, rows: Iterable[IndexRow]) -> None:
        self.tick += 1
        fresh: list[IndexRow] = []
        for row in rows:
            position = self.position(row.seq)
            if position < 0:
                fresh.append(row)
                continue
            self._attrs[position] = self._codes_of(row)
            self.rows.set(position, quantize(row.vector))
            self._changed_at[position] = self.tick
        if not fresh:
            return
        # New rows are appended in one block: a cold load of a large store stays vectorised.
        start = self.rows.append(quantize(np.stack([row.vector for row in fresh])))
        stop = start + len(fresh)
        if stop > self._seqs.size:
            capacity = max(stop, 2 * self._seqs.size)
            self._seqs = np.resize(self._seqs, capacity)
            self._attrs = np.resize(self._attrs, (capacity, len(ATTRS)))
        self._seqs[start:stop] = [row.seq for row in fresh]
        self._attrs[start:stop] = [self._codes_of(row) for row in fresh]
        self._map(self._seqs[start:stop], np.arange(start, stop, dtype=np.int64))
        self._size = stop

    def update_attributes(self, seq: int, *, status: str, kind: str) -> None:
        """Follow a status or kind change of a row whose vector did not change."""
        position = self.position(seq)
        if position >= 0:
            self._attrs[position, ATTRS.index("status")] = self._codes["status"].code(status)
            self._attrs[position, ATTRS.index("kind")] = self._codes["kind"].code(kind)
            self._version += 1

    def remove(self, seqs: Iterable[int]) -> None:
        """Rows deleted from the store: their positions never match a filter again."""
        for seq in seqs:
            position = self.position(seq)
            if position >= 0:
                self._attrs[position, ATTRS.index("status")] = REMOVED
                self._pos_by_seq[seq] = -1
                self._changed_at.pop(position, None)
        self._version += 1

    # --- search ----------------------------------------------------------------------------------
    def _mask(self, where: IndexFilter, n: int) -> npt.NDArray[np.bool_]:
        return self._masks.mask(self._version, self._attrs[:n], self._codes, where, self._pos_by_seq)

    def search(self, query: Vector, where: IndexFilter, count: int, *, ann_min_rows: int) -> list[tuple[int, float]]:
        """About the ``count`` best (seq, int8 cosine) among rows passing ``where``, best first: candidates
        for the caller to rescore exactly. The graph is used when at least ``ann_min_rows`` rows pass."""
        n = self._size
        if n == 0 or count <= 0:
            return []
        mask = self._mask(where, n)
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
        return [(int(self._seqs[positions[i]]), float(scores[i])) for i in order]

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
