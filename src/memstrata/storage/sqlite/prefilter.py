"""The rows of a scope that pass a filter the in-process indexes cannot check (metadata, key, times).

A filtered search first checks a generous list of index candidates in SQL. When the filter and the query
pull apart (a query about one topic, a filter on another) too few of them pass, and the rows passing the
filter are listed instead: a scan of the scope that evaluates the filter on every row (about 40 ms at 100k
memories, 0.7 s at 1M). Agents repeat their filters (one project, one source), so the list is kept per
filter and brought up to date from the rows written since: every write stamps the memories it touches with
the store's ``meta.rev`` (sqlite/vectors.py follows the same stamps), so only those rows are checked again.
A deleted row may stay in a list: the indexes never return a removed row, and every hit is checked in SQL.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memstrata.storage.sql.dialect import Tx
from memstrata.storage.sql.where import Where

Seqs = npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Listing:
    origin: tuple[str, str]  # the store's id and index epoch: a restored or rebuilt file lists again
    rev: int
    seqs: Seqs  # sorted, unique


class PrefilterCache:
    """Per filter (its SQL and parameters): the seqs of the rows passing it, as of a rev of the store."""

    def __init__(self, *, filters: int = 8, max_rows: int = 4_000_000) -> None:
        self._listings: OrderedDict[tuple[object, ...], _Listing] = OrderedDict()
        self._lock = threading.Lock()
        self._filters = filters
        self._max_rows = max_rows  # seqs kept over every filter (8 bytes each)

    def knows(self, where: Where) -> bool:
        """True when ``where`` was listed before (it may need catching up)."""
        with self._lock:
            return (where.sql(), *where.params) in self._listings

    def passing(self, tx: Tx, where: Where) -> Seqs:
        """Seqs of the rows passing ``where`` (a condition on ``memories m``), inside one read transaction."""
        meta = dict(tx.execute("SELECT key, value FROM meta").fetchall())
        origin, rev = (str(meta.get("store_id", "")), str(meta.get("index_epoch", ""))), int(meta["rev"])
        key = (where.sql(), *where.params)
        with self._lock:
            known = self._listings.get(key)
        if known is not None and known.origin != origin:
            known = None
        if known is not None and known.rev == rev:
            return known.seqs
        if known is not None and known.rev < rev:
            seqs = _caught_up(tx, where, known)
        else:
            found = tx.execute(f"SELECT m.seq FROM memories m WHERE {where.sql()}", where.params).fetchall()
            seqs = np.unique(np.fromiter((row[0] for row in found), dtype=np.int64, count=len(found)))
        self._keep(key, _Listing(origin, rev, seqs))
        return seqs

    def _keep(self, key: tuple[object, ...], listing: _Listing) -> None:
        with self._lock:
            self._listings[key] = listing
            self._listings.move_to_end(key)
            while len(self._listings) > self._filters or (
                len(self._listings) > 1 and sum(kept.seqs.size for kept in self._listings.values()) > self._max_rows
            ):
                self._listings.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._listings.clear()


def _caught_up(tx: Tx, where: Where, known: _Listing) -> Seqs:
    """``known`` with the rows written after its rev checked again (by the ``memories_rev`` index)."""
    changed = tx.execute(
        f"SELECT m.seq, CASE WHEN {where.sql()} THEN 1 ELSE 0 END FROM memories m WHERE m.rev > ?",
        (*where.params, known.rev),
    ).fetchall()
    if not changed:
        return known.seqs
    seqs = np.fromiter((row[0] for row in changed), dtype=np.int64, count=len(changed))
    passes = np.fromiter((row[1] for row in changed), dtype=bool, count=len(changed))
    kept = known.seqs[~np.isin(known.seqs, seqs[~passes])]
    return np.union1d(kept, seqs[passes])
