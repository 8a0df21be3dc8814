"""The rows of an in-process index (vector or keyword): per *position*, the memory's seq and integer codes
for its scope, status and kind; per seq, its position. Filters become integer comparisons over these
arrays, applied before ranking, so another scope's rows are never scored.

At a million rows these arrays are most of an index's own memory, so they are kept narrow: seqs as int32
(a seq is also an index into ``pos_by_seq``, so it is far below 2**31 wherever that array fits in memory)
and codes as int16, widened to int32 the first time a column holds more than 32,767 distinct values (a
store with that many users). Positions are append-only; a row that leaves keeps its position with the
status ``REMOVED``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

NO_CODE = -1  # a value the table has never seen: nothing can match it
REMOVED = -2  # the status code of a position whose row left the store
ATTRS = ("tenant_id", "user_id", "agent_id", "session_id", "status", "kind")
STATUS, KIND = ATTRS.index("status"), ATTRS.index("kind")
SeqMap = npt.NDArray[np.int32]  # a row's position by its seq, -1 for none
_INT16_MAX = np.iinfo(np.int16).max


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


def row_mask(attrs: npt.NDArray[np.integer[Any]], codes: dict[str, Codes], where: IndexFilter,
             pos_by_seq: SeqMap) -> npt.NDArray[np.bool_]:  # fmt: skip
    """Which of the rows ``attrs`` (codes per :data:`ATTRS`) pass ``where``; ``pos_by_seq`` maps a seq to its row."""
    n = attrs.shape[0]

    def column(name: str) -> npt.NDArray[np.integer[Any]]:
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
    """Masks of recent filters over one table's rows, keyed by the version of the attributes they were
    computed from (the table bumps it after each change): a busy scope's searches skip comparing every row's
    codes again (about 1 ms at 100k rows, 10 ms at 1M). A search that overlapped a change files its mask
    under the old version, where no later search looks."""

    def __init__(self, size: int = 16) -> None:
        self._masks: OrderedDict[tuple[Any, ...], npt.NDArray[np.bool_]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def mask(self, version: int, attrs: npt.NDArray[np.integer[Any]], codes: dict[str, Codes], where: IndexFilter,
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


class RowTable:
    """Seqs and attribute codes by position, positions by seq, and the filter masks over them. Changes come
    from one writer at a time (the index's keeper holds its lock); searches may read beside them, so arrays
    are replaced, never resized in place."""

    def __init__(self, capacity: int = 1024) -> None:
        self.codes = {name: Codes() for name in ATTRS}
        self.seqs = np.zeros(max(capacity, 1024), dtype=np.int32)
        self.attrs: npt.NDArray[np.integer[Any]] = np.zeros((self.seqs.size, len(ATTRS)), dtype=np.int16)
        self.pos_by_seq: SeqMap = np.full(1024, -1, dtype=np.int32)
        self.size = 0
        self.version = 0  # bumped after every change of the attributes: keys the filter masks
        self._masks = FilterMasks()

    @classmethod
    def restore(cls, seqs: npt.NDArray[np.integer[Any]], attrs: npt.NDArray[np.integer[Any]],
                codes: dict[str, list[str]]) -> RowTable:  # fmt: skip
        """A table persisted as :meth:`snapshot` wrote it (older files hold int64 seqs and int32 codes)."""
        table = cls(len(seqs))
        table.codes = {name: Codes(codes.get(name, [])) for name in ATTRS}
        table._widen_for(max((len(values) for values in codes.values()), default=0))
        table.seqs[: len(seqs)] = seqs
        table.attrs[: len(seqs)] = attrs
        table.size = len(seqs)
        live = table.attrs[: table.size, STATUS] != REMOVED
        table.map(table.seqs[: table.size][live], np.flatnonzero(live))
        return table

    def snapshot(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.integer[Any]], dict[str, list[str]]]:
        n = self.size
        return self.seqs[:n].copy(), self.attrs[:n].copy(), {name: self.codes[name].values() for name in ATTRS}

    # --- changes ---------------------------------------------------------------------------------
    def encode(self, values: Sequence[str]) -> list[int]:
        """Codes of one row's :data:`ATTRS` values, new values interned."""
        found = [self.codes[name].code(value) for name, value in zip(ATTRS, values, strict=True)]
        self._widen_for(max(found) + 1)
        return found

    def _widen_for(self, distinct: int) -> None:
        if distinct > _INT16_MAX and self.attrs.dtype != np.int32:
            self.attrs = self.attrs.astype(np.int32)

    def reserve(self, size: int) -> None:
        """Room for positions up to ``size``."""
        if size > self.seqs.size:
            capacity = max(size, 2 * self.seqs.size)
            self.seqs = np.resize(self.seqs, capacity)
            self.attrs = np.resize(self.attrs, (capacity, len(ATTRS)))

    def append(self, seqs: Sequence[int], codes: Sequence[Sequence[int]]) -> int:
        """Rows at the end (``codes`` from :meth:`encode`); returns the position of the first."""
        start, stop = self.size, self.size + len(seqs)
        self.reserve(stop)
        self.seqs[start:stop] = seqs
        self.attrs[start:stop] = codes
        self.map(self.seqs[start:stop], np.arange(start, stop, dtype=np.int64))
        self.size = stop
        self.version += 1
        return start

    def set_codes(self, position: int, codes: Sequence[int]) -> None:
        self.attrs[position] = codes
        self.version += 1

    def set_status_kind(self, position: int, status: str, kind: str) -> None:
        status_code, kind_code = self.codes["status"].code(status), self.codes["kind"].code(kind)
        self._widen_for(max(status_code, kind_code) + 1)
        self.attrs[position, STATUS], self.attrs[position, KIND] = status_code, kind_code
        self.version += 1

    def retire(self, position: int) -> None:
        """The row at ``position`` never passes a filter again (its seq may still map there: see :meth:`unmap`)."""
        self.attrs[position, STATUS] = REMOVED
        self.version += 1

    def map(self, seqs: npt.NDArray[np.integer[Any]], positions: npt.NDArray[np.int64]) -> None:
        if seqs.size:
            top = int(seqs.max())
            if top >= self.pos_by_seq.size:
                grown = np.full(max(top + 1, 2 * self.pos_by_seq.size), -1, dtype=np.int32)
                grown[: self.pos_by_seq.size] = self.pos_by_seq
                self.pos_by_seq = grown
            self.pos_by_seq[seqs] = positions

    def unmap(self, seq: int) -> None:
        if 0 <= seq < self.pos_by_seq.size:
            self.pos_by_seq[seq] = -1

    def position(self, seq: int) -> int:
        return int(self.pos_by_seq[seq]) if 0 <= seq < self.pos_by_seq.size else -1

    # --- reading ---------------------------------------------------------------------------------
    def mask(self, where: IndexFilter, n: int) -> npt.NDArray[np.bool_]:
        """Which of the first ``n`` positions pass ``where``."""
        return self._masks.mask(self.version, self.attrs[:n], self.codes, where, self.pos_by_seq)
