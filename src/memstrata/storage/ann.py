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

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from usearch.index import Index

from memstrata.storage.compact_rows import CompactRows, Int8Rows, Positions

CONNECTIVITY = 16
EXPANSION_ADD = 40
EXPANSION_SEARCH = 256
# rows added per call, so a build can be abandoned between chunks: ~2 s each on one busy core, well inside the
# wait of close() (a build still running when the interpreter exits aborts the process from inside usearch)
_CHUNK = 10_000


def _new_index(dims: int) -> Index:
    # usearch is imported on first use, not with memstrata: loaded before onnxruntime (which MarkItDown's
    # magika imports in the document converter's child process) it makes that import crash the process.
    from usearch.index import Index

    return Index(ndim=dims, metric="cos", dtype="i8", connectivity=CONNECTIVITY, expansion_add=EXPANSION_ADD,
                 expansion_search=EXPANSION_SEARCH)  # fmt: skip


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
        """A saved graph, memory-mapped read-only."""
        index = _new_index(dims)
        index.view(str(path))
        if len(index) != size:
            raise ValueError(f"{path} holds {len(index)} rows, expected {size}")
        return cls(index, size)

    def save(self, path: Path) -> None:
        self._index.save(str(path))

    def search(self, query: Int8Rows, count: int) -> Positions:
        """Positions of about the ``count`` nearest rows, nearest first."""
        if self.size == 0 or count <= 0:
            return np.zeros(0, dtype=np.int64)
        found = self._index.search(query[0], min(count, self.size), threads=1)
        return np.asarray(found.keys, dtype=np.int64)
