"""The approximate index: an HNSW graph (usearch) over the int8 rows of a :class:`~.vector_index.VectorIndex`.

A graph is an immutable snapshot of rows ``[0, size)``: built once (in a background thread for large
stores), saved beside the store and memory-mapped when a process opens it, so a million-row graph costs
no load time and only the pages searches touch. Rows added or changed after the snapshot are scanned
exactly beside it until the next build folds them in. usearch has no filtered search in Python, so
filters are applied to what the graph returns, asking for more candidates when few pass (``search``).

Parameters (measured on this 2-core machine, int8 rows of 512 dims): connectivity 16 and expansion 40
at build time add ~5k rows/s per thread (idle); expansion 256 at search time: 128 gave recall@10 0.967 against an
exact scan at 100k (clustered synthetic vectors beyond 20k real ones), bench/scale.py records it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from usearch.index import Index

from memstrata.storage.compact_rows import CompactRows, Int8Rows, Positions

log = logging.getLogger(__name__)
CONNECTIVITY = 16
EXPANSION_ADD = 40
EXPANSION_SEARCH = 256
# rows added per call, so a build can be abandoned between chunks: ~2 s each on one busy core, well inside the
# wait of close() (a build still running when the interpreter exits aborts the process from inside usearch)
_CHUNK = 10_000


def _new_index(dims: int, *, key_lookups: bool = True) -> Index:
    # usearch is imported on first use, not with memstrata: loaded before onnxruntime (which MarkItDown's
    # magika imports in the document converter's child process) it makes that import crash the process.
    from usearch.index import Index

    return Index(ndim=dims, metric="cos", dtype="i8", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                 expansion_search=EXPANSION_SEARCH, enable_key_lookups=key_lookups)  # fmt: skip


class AnnGraph:
    def __init__(self, index: Index, size: int) -> None:
        self._index = index
        self.size = size  # rows [0, size) of the VectorIndex are in the graph

    @classmethod
    def build(cls, rows: CompactRows, size: int, *, threads: Callable[[], int] = lambda: 1,
              cancelled: Callable[[], bool] = lambda: False) -> AnnGraph | None:  # fmt: skip
        """A graph over rows ``[0, size)``; None when ``cancelled`` turned true between chunks. ``threads`` is asked
        before each chunk, so a caller that starts waiting for the graph can give it more cores."""
        index = _new_index(rows.dims)
        for start in range(0, size, _CHUNK):
            if cancelled():
                return None
            stop = min(start + _CHUNK, size)
            positions = np.arange(start, stop, dtype=np.int64)
            index.add(positions.astype(np.uint64), rows.gather(positions), threads=threads())
        return cls(index, size)

    @classmethod
    def view(cls, path: Path, size: int, dims: int) -> AnnGraph:
        """A saved graph, memory-mapped read-only. Searches return keys from the nodes themselves, so the graph
        keeps no key-to-slot table (usearch's hash map: 32 MB of the process's own memory at a million rows)."""
        index = _new_index(dims, key_lookups=False)
        index.view(str(path))
        if len(index) != size:
            raise ValueError(f"{path} holds {len(index)} rows, expected {size}")
        return cls(index, size)

    def save(self, path: Path) -> None:
        self._index.save(str(path))

    def saved_slots(self, path: Path) -> npt.NDArray[np.int32] | None:
        """Where each position's row lies among the rows inside the graph file just saved at ``path``, checked
        against the graph itself; None where usearch wrote another layout (the caller then keeps its own copy)."""
        try:
            dims = int(self._index.ndim)
            rows, keys = saved_rows(path, self.size, dims), saved_keys(path, self.size, dims)
            sample = np.unique(np.linspace(0, self.size - 1, min(self.size, 256)).astype(np.int64))
            held = np.asarray(self._index.get(keys[sample].astype(np.uint64)), dtype=np.int8)
            if not np.array_equal(held.reshape(sample.size, -1), rows[sample]):
                raise ValueError("its rows differ from the graph's")
        except (ValueError, TypeError, IndexError, OSError) as exc:
            log.info("the rows inside %s cannot be read in place (%s); saving a copy", path, exc)
            return None
        slots = np.empty(self.size, dtype=np.int32)
        slots[keys] = np.arange(self.size, dtype=np.int32)
        return slots

    def search(self, query: Int8Rows, count: int) -> Positions:
        """Positions of about the ``count`` nearest rows, nearest first."""
        if self.size == 0 or count <= 0:
            return np.zeros(0, dtype=np.int64)
        found = self._index.search(query[0], min(count, self.size), threads=1)
        return np.asarray(found.keys, dtype=np.int64)


def saved_rows(path: Path, size: int, dims: int) -> Int8Rows:
    """The int8 rows inside a graph file written by :meth:`AnnGraph.save`, memory-mapped copy-on-write, in the
    file's order (the order threads inserted them in; :func:`saved_keys` says whose each is).

    usearch 2's layout: the rows as a matrix (uint32 row count and bytes per row, then the rows), a 64-byte
    header of the dense index, the graph's header (five uint64: size, connectivity, connectivity of the base
    level, top level, entry node), an int16 level per node, then the nodes, each its uint64 key, its int16
    level and a uint32 count plus a neighbour list per level.
    """
    header = np.fromfile(path, dtype=np.uint32, count=2)
    if header.size != 2 or (int(header[0]), int(header[1])) != (size, dims):
        raise ValueError(f"its matrix header is {header.tolist()}, expected [{size}, {dims}]")
    if size == 0:
        return np.zeros((0, dims), dtype=np.int8)
    return np.asarray(np.memmap(path, dtype=np.int8, mode="c", offset=8, shape=(size, dims)))


def saved_keys(path: Path, size: int, dims: int) -> Positions:
    """The key (position) of each row of :func:`saved_rows`, read from the nodes. They must end exactly where the
    file does and be the positions ``[0, size)``; anything else raises ValueError."""
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    at = 8 + size * dims + 64
    nodes, connectivity, base_connectivity = (int(x) for x in raw[at : at + 24].view(np.uint64))
    if nodes != size:
        raise ValueError(f"its graph has {nodes} nodes, expected {size}")
    at += 40
    levels = raw[at : at + 2 * size].view(np.int16).astype(np.int64)
    at += 2 * size
    node_bytes = 8 + 2 + (4 + 4 * base_connectivity) + levels * (4 + 4 * connectivity)
    ends = at + np.cumsum(node_bytes)
    if size and int(ends[-1]) != raw.shape[0]:
        raise ValueError("its nodes do not end where the file does")
    keys: Positions = raw[(ends - node_bytes)[:, None] + np.arange(8)].view(np.uint64).ravel().astype(np.int64)
    if not np.array_equal(np.sort(keys), np.arange(size)):
        raise ValueError("its keys are not the positions 0..size-1")
    return keys
