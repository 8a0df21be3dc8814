"""An in-process exact vector index, derived from the store and rebuilt from it at will.

This Python's sqlite3 cannot load sqlite-vec, so vectors live in the database as BLOBs (the
source of truth) and this index keeps a copy in one contiguous float32 matrix. Beside each row
it keeps integer codes for scope, status and kind, so the scope filter is a vectorised mask
applied *before* ranking: another scope's rows are never scored, let alone returned.

Exact search streams ``n x dims x 4`` bytes per query: about 20 MB at 10k memories, which
numpy does in a few milliseconds on two cores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memstrata.storage.protocol import Vector

NO_CODE = -1  # a value the index has never seen: nothing can match it


class _Codes:
    """Interns strings as small integers so filters become integer comparisons."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def code(self, value: str) -> int:
        return self._codes.setdefault(value, len(self._codes))

    def lookup(self, value: str) -> int:
        return self._codes.get(value, NO_CODE)


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


_ATTRS = ("tenant_id", "user_id", "agent_id", "session_id", "status", "kind")


class VectorIndex:
    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._size = 0
        self._vectors = np.zeros((0, dims), dtype=np.float32)
        self._seqs = np.zeros(0, dtype=np.int64)
        self._attr = {name: np.zeros(0, dtype=np.int32) for name in _ATTRS}
        self._codes = {name: _Codes() for name in _ATTRS}
        self._position: dict[int, int] = {}

    def __len__(self) -> int:
        return self._size

    def _grow(self, needed: int) -> None:
        capacity = len(self._seqs)
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, 1024)
        vectors = np.zeros((new_capacity, self.dims), dtype=np.float32)
        vectors[: self._size] = self._vectors[: self._size]
        self._vectors = vectors
        self._seqs = np.resize(self._seqs, new_capacity)
        for name in _ATTRS:
            self._attr[name] = np.resize(self._attr[name], new_capacity)

    def upsert(self, rows: Iterable[IndexRow]) -> None:
        fresh: list[IndexRow] = []
        for row in rows:
            position = self._position.get(row.seq)
            if position is None:
                fresh.append(row)
            else:
                self._set(position, row)
        if fresh:
            # New rows are appended in one block: a cold load of a large store stays vectorised.
            start = self._size
            self._grow(start + len(fresh))
            self._vectors[start : start + len(fresh)] = np.stack([row.vector for row in fresh])
            for offset, row in enumerate(fresh):
                position = start + offset
                self._position[row.seq] = position
                self._seqs[position] = row.seq
                for name in _ATTRS:
                    self._attr[name][position] = self._codes[name].code(getattr(row, name))
            self._size += len(fresh)

    def _set(self, position: int, row: IndexRow) -> None:
        self._vectors[position] = row.vector
        for name in _ATTRS:
            self._attr[name][position] = self._codes[name].code(getattr(row, name))

    def update_attributes(self, seq: int, *, status: str, kind: str) -> None:
        """Follow a status or kind change of a row whose vector did not change."""
        position = self._position.get(seq)
        if position is not None:
            self._attr["status"][position] = self._codes["status"].code(status)
            self._attr["kind"][position] = self._codes["kind"].code(kind)

    def _mask(self, where: IndexFilter) -> npt.NDArray[np.bool_]:
        n = self._size
        mask: npt.NDArray[np.bool_] = self._attr["tenant_id"][:n] == self._codes["tenant_id"].lookup(where.tenant_id)
        for name in ("user_id", "agent_id", "session_id"):
            value = getattr(where, name)
            if value is not None:
                mask &= self._attr[name][:n] == self._codes[name].lookup(value)
        status_codes = [self._codes["status"].lookup(s) for s in where.statuses]
        mask &= np.isin(self._attr["status"][:n], status_codes)
        if where.kinds is not None:
            mask &= np.isin(self._attr["kind"][:n], [self._codes["kind"].lookup(k) for k in where.kinds])
        if where.excluded_kinds:
            excluded = [self._codes["kind"].lookup(k) for k in where.excluded_kinds]
            mask &= ~np.isin(self._attr["kind"][:n], excluded)
        if where.allowed_seqs is not None:
            mask &= np.isin(self._seqs[:n], where.allowed_seqs)
        return mask

    def search(self, query: Vector, where: IndexFilter, limit: int) -> list[tuple[int, float]]:
        """Top ``limit`` (seq, cosine similarity) among rows passing ``where``, best first."""
        if self._size == 0 or limit <= 0:
            return []
        positions = np.flatnonzero(self._mask(where))
        if positions.size == 0:
            return []
        if positions.size == self._size:
            scores = self._vectors[: self._size] @ query
        else:
            scores = self._vectors[positions] @ query
        k = min(limit, scores.size)
        top = np.argpartition(-scores, k - 1)[:k] if k < scores.size else np.arange(scores.size)
        top = top[np.argsort(-scores[top], kind="stable")]
        chosen = positions[top] if positions.size != self._size else top
        return [(int(self._seqs[p]), float(scores[i])) for p, i in zip(chosen, top, strict=True)]
