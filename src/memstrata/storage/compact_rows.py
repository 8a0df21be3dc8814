"""Vectors as int8 rows: a quarter of float32's memory and bandwidth, exact enough to pick candidates.

Each row is scaled so its largest component is ±127 and rounded. Cosine similarity does not depend on
a row's scale, so the int8 rows rank by (nearly) the same cosine as the float vectors; the store rescores
the best candidates with the float vectors it keeps (float16 in SQLite: cosines within ~5e-5 of float32).

The rows live in two parts: a ``base`` loaded from the persisted index (memory-mapped copy-on-write, so
opening a million rows reads nothing until a search touches them) and a growable in-memory ``tail`` for
rows added since. The base is either a file of rows in position order or the copy of the rows inside a
saved HNSW graph, which keeps them in its own order (``slots`` maps a position to its row there): the
graph needs them anyway, and a second copy on disk would cost 512 bytes a row. Scans use usearch's SIMD
kernels on int8 directly (numpy would upcast to float32).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

Int8Rows = npt.NDArray[np.int8]
Positions = npt.NDArray[np.int64]
_SAVE_CHUNK = 65_536  # rows gathered per write: 32 MiB at 512 dims


def quantize(vectors: npt.NDArray[np.float32]) -> Int8Rows:
    """float rows (or one row) -> int8 rows with the largest component of each at ±127."""
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    peak = np.abs(matrix).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    rows: Int8Rows = np.clip(np.rint(matrix * (127.0 / peak)), -127, 127).astype(np.int8)
    return rows


def exact_top(rows: Int8Rows, query: Int8Rows, count: int) -> tuple[Positions, npt.NDArray[np.float32]]:
    """Indexes into ``rows`` of the ``count`` best by cosine with ``query`` (one int8 row), best first."""
    if rows.shape[0] == 0 or count <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    from usearch.index import search as usearch_search  # late: see memstrata.storage.ann

    found = usearch_search(rows, query[0], min(count, rows.shape[0]), "cos", exact=True, threads=1)
    keys = np.asarray(found.keys, dtype=np.int64)
    return keys, (1.0 - np.asarray(found.distances, dtype=np.float32))


class CompactRows:
    def __init__(self, dims: int, base: Int8Rows | None = None, slots: npt.NDArray[np.int32] | None = None,
                 tail: Int8Rows | None = None) -> None:  # fmt: skip
        self.dims = dims
        self.base: Int8Rows = base if base is not None else np.zeros((0, dims), dtype=np.int8)
        self.slots = slots  # position -> row of ``base``; None: the same
        # The tail may start as persisted rows too (memory-mapped); the first append copies it into memory.
        self._tail: Int8Rows = tail if tail is not None else np.zeros((0, dims), dtype=np.int8)
        self._tail_size = int(self._tail.shape[0])

    @classmethod
    def open(cls, path: Path, rows: int, dims: int) -> CompactRows:
        """Rows persisted by :meth:`save`, memory-mapped copy-on-write (changes stay in this process)."""
        base = np.memmap(path, dtype=np.int8, mode="c", shape=(rows, dims)) if rows else None
        return cls(dims, None if base is None else np.asarray(base))

    def __len__(self) -> int:
        return int(self.base.shape[0]) + self._tail_size

    @property
    def tail(self) -> Int8Rows:
        return self._tail[: self._tail_size]

    def append(self, rows: Int8Rows) -> int:
        """Add rows at the end; returns the position of the first."""
        first = len(self)
        needed = self._tail_size + rows.shape[0]
        if needed > self._tail.shape[0]:
            grown = np.zeros((max(needed, 2 * self._tail.shape[0], 1024), self.dims), dtype=np.int8)
            grown[: self._tail_size] = self.tail
            self._tail = grown
        self._tail[self._tail_size : needed] = rows
        self._tail_size = needed
        return first

    def set(self, position: int, row: Int8Rows) -> None:
        if position < self.base.shape[0]:
            self.base[position if self.slots is None else self.slots[position]] = row[0]
        else:
            self._tail[position - self.base.shape[0]] = row[0]

    def gather(self, positions: Positions) -> Int8Rows:
        """The rows at ``positions`` (ascending), as one matrix; a whole part is returned without a copy."""
        split = int(np.searchsorted(positions, self.base.shape[0]))
        low, high = positions[:split], positions[split:] - self.base.shape[0]
        if high.size == 0:
            return self._from_base(low)
        if low.size == 0:
            return self.tail if high.size == self._tail_size else self._tail[high]
        return np.concatenate([self._from_base(low), self._tail[high]])

    def _from_base(self, positions: Positions) -> Int8Rows:
        if self.slots is not None:
            return self.base[self.slots[positions]]
        return self.base if positions.size == self.base.shape[0] else self.base[positions]

    def save(self, path: Path, positions: Positions | None = None) -> None:
        """Write the rows at ``positions`` (ascending; default all of them) one after another."""
        if positions is None:
            positions = np.arange(len(self), dtype=np.int64)
        with path.open("wb") as out:
            for start in range(0, positions.size, _SAVE_CHUNK):
                out.write(np.ascontiguousarray(self.gather(positions[start : start + _SAVE_CHUNK])).tobytes())
