"""BM25 over the keyword index's terms, in memory: FTS5's own scores, without FTS5's per-row cost.

SQLite's FTS5 (``memory_fts``) stays the source of truth; this is a cache of it, like the vector index.
FTS5 computes ``bm25()`` for every row matching any query term and then reads each one's memory row to
check the scope: at 100k memories that is 10-25 ms a query. Here a query gathers the postings of its
terms (numpy arrays), scores them with FTS5's formula (k1 1.2, b 0.75, the same IDF and average length
over every row of the table), masks the scope with integer codes, and keeps the best: about 1 ms at 100k
rows and 3 ms at 1M for the same ranking and the same scores.

Terms are FTS5's own: :class:`~memstrata.lexical.TermSplitter` runs the configured tokenizer (porter stemming, Unicode
folding) in a scratch in-memory FTS5 table and reads the terms back through ``fts5vocab``, so a term
here is exactly a term there. Rows are *positions*, append-only: a row whose terms change is retired
and added again; a retired position keeps its postings but no length and a removed status, so it never
scores and never passes a filter.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.lexical import TermSplitter
from memstrata.storage.row_table import IndexFilter, RowTable

K1, B = 1.2, 0.75  # FTS5's bm25() constants
# (positions, term counts): these arrays are most of the copy's memory (12.7M entries at 1M short memories: 102 MB
# as int32 + float32, 76 MB with 16-bit counts), so counts take the narrowest exact form (see _narrow)
Counts = npt.NDArray[np.uint8] | npt.NDArray[np.uint16]
Postings = tuple[npt.NDArray[np.int32], Counts]
_ONE = np.ones(1, dtype=np.uint8)
Postings64 = tuple[npt.NDArray[np.int32], npt.NDArray[np.float64]]  # (positions, BM25 part of the term)
# cached BM25 parts (8-12 bytes each) before the cache starts over: a few queries' terms. It saves computing a
# repeated term again (~1 ms for a term in 100k rows); at 8M entries it held 34 MB after 50 queries at 1M rows
# for no gain in their latency (each asks other terms)
_SCORED_ENTRIES = 1_000_000


@dataclass(frozen=True)
class KeywordRow:
    seq: int
    attrs: tuple[str, ...]  # values of ATTRS
    document: str  # memory_fts.tokens: the space-separated keyword tokens


class KeywordIndex:
    def __init__(self, splitter: TermSplitter) -> None:
        self._splitter = splitter
        self._terms: dict[str, int] = {}
        self._postings: list[list[Postings]] = []  # per term: chunks of postings
        self._table = RowTable()  # seqs, scope codes and positions by seq
        # Per row, in the narrowest exact types (4 bytes less each than 64 bits, 8 MB at 1M rows): terms per
        # row (0: retired; float32 holds integers exactly up to 2**24) and the CRC-32 of its document (same
        # text, same postings).
        self._lengths = np.zeros(1024, dtype=np.float32)
        self._digests = np.zeros(1024, dtype=np.uint32)
        self._rows = 0  # live rows: FTS5's row count
        self._total = 0.0  # terms over live rows: FTS5's token count
        self._version = 0  # bumped after every change: keys the caches below
        self._scored: dict[int, Postings64] = {}  # per term: (live positions, BM25 part) as of _scored_version
        self._scored_version = -1
        self._totals = np.zeros(0, dtype=np.float64)  # see _zeroed_totals
        self._scored_entries = 0

    def __len__(self) -> int:
        return self._rows

    # --- changes ---------------------------------------------------------------------------------
    def _grow(self, size: int) -> None:
        self._table.reserve(size)
        if size > self._lengths.size:
            capacity = max(size, 2 * self._lengths.size)
            self._lengths = np.resize(self._lengths, capacity)
            self._digests = np.resize(self._digests, capacity)

    def remove(self, seqs: Iterable[int]) -> None:
        for seq in seqs:
            position = self._table.position(seq)
            if position >= 0:
                self._retire(position)
                self._table.unmap(seq)
        self._version += 1

    def _retire(self, position: int) -> None:
        if self._lengths[position] > 0:
            self._rows -= 1
            self._total -= float(self._lengths[position])
            self._lengths[position] = 0.0
            self._table.retire(position)

    def upsert(self, rows: Iterable[KeywordRow]) -> None:
        """New rows, rows whose document changed (retired, then added again), and rows whose scope, status or
        kind changed (updated in place). A row without a document (no keyword entry) is removed."""
        try:
            self._upsert(rows)
        finally:
            self._version += 1

    def _upsert(self, rows: Iterable[KeywordRow]) -> None:
        added: dict[int, tuple[list[int], list[int]]] = {}
        fresh_seqs: list[int] = []  # rows appended to the table in one block at the end
        fresh_codes: list[list[int]] = []
        for row in rows:
            codes = self._table.encode(row.attrs)
            digest = zlib.crc32(row.document.encode("utf-8"))
            position = self._table.position(row.seq)
            if position >= 0 and self._lengths[position] > 0 and self._digests[position] == digest:
                self._table.set_codes(position, codes)
                continue
            if position >= 0:
                self._retire(position)
            terms = [term for token_terms in self._splitter.terms(row.document.split()) for term in token_terms]
            if not terms:
                if position >= 0:
                    self._table.unmap(row.seq)
                continue
            position = self._table.size + len(fresh_seqs)
            self._grow(position + 1)
            self._digests[position], self._lengths[position] = digest, len(terms)
            fresh_seqs.append(row.seq)
            fresh_codes.append(codes)
            self._rows += 1
            self._total += len(terms)
            for term, count in Counter(terms).items():
                term_id = self._terms.setdefault(term, len(self._terms))
                positions, counts = added.setdefault(term_id, ([], []))
                positions.append(position)
                counts.append(count)
        for term_id, (positions, counts) in added.items():
            if term_id == len(self._postings):
                self._postings.append([])
            chunks = self._postings[term_id]
            chunks.append((np.asarray(positions, dtype=np.int32), _narrow(np.asarray(counts))))
            if len(chunks) > 8:  # many small batches: one array again
                self._postings[term_id] = [_merged(chunks)]
        if fresh_seqs:
            self._table.append(fresh_seqs, fresh_codes)

    def compact(self) -> None:
        """Each term's postings as one array: a first build appends them batch by batch, and merging them
        later, one term per search, leaves the process's heap holding the freed chunks (~20 MB at 1M rows)."""
        self._postings = [[_merged(chunks)] if len(chunks) > 1 else chunks for chunks in self._postings]

    # --- search ----------------------------------------------------------------------------------
    def phrases(self, tokens: Sequence[str]) -> list[int] | None:
        """Term ids of the query tokens (None for a term no row holds), or None when a token is a multi-term
        phrase (FTS5 would match it by adjacency, which this index does not keep)."""
        found: list[int] = []
        for terms in self._splitter.terms(tokens):
            if len(terms) > 1:
                return None
            if terms and terms[0] in self._terms:
                found.append(self._terms[terms[0]])
        return found

    def search(self, term_ids: Sequence[int], where: IndexFilter, limit: int) -> list[tuple[int, float]]:
        """The ``limit`` best (seq, bm25 score, higher is better) of rows passing ``where``, best first. Not
        reentrant: the keeper searches under its lock."""
        if not term_ids or self._rows == 0 or limit <= 0:
            return []
        size = self._table.size
        mask = self._table.mask(where, size)
        everyone = bool(mask.all())  # one scope holds the store: no row to mask out
        totals = self._zeroed_totals(size)
        matched: list[npt.NDArray[np.int32]] = []  # each row once: where its total was still 0
        try:
            for term_id in term_ids:  # each query token is a phrase of its own, as in the FTS5 MATCH
                positions, scores = self._scores(term_id)
                if not everyone:
                    keep = mask[positions]
                    positions, scores = positions[keep], scores[keep]
                before = totals[positions]
                matched.append(positions[before == 0.0])  # every BM25 part is > 0
                totals[positions] = before + scores  # phrase by phrase, as FTS5 sums them (positions are unique)
            return self._best(totals, np.concatenate(matched), limit)
        finally:
            for positions in matched:  # zero again for the next search
                totals[positions] = 0.0

    def _zeroed_totals(self, size: int) -> npt.NDArray[np.float64]:
        """One score per row, all 0: kept between searches (each zeroes what it touched) rather than allocated,
        because at 1M rows a fresh array is an 8 MB memset per search (~1 ms) and heap the process keeps."""
        if self._totals.size < size:
            self._totals = np.zeros(max(size, 2 * self._totals.size), dtype=np.float64)
        return self._totals[:size]

    def _best(self, totals: npt.NDArray[np.float64], rows: npt.NDArray[np.int32], limit: int
              ) -> list[tuple[int, float]]:  # fmt: skip
        """The best ``limit`` of ``rows`` (each once), equal scores in seq order as FTS5 returns them."""
        if rows.size > limit:  # rows tied at the cut are taken in seq order like the rest
            values = totals[rows]
            cut = np.partition(values, values.size - limit)[values.size - limit]
            above, tied = rows[values > cut], rows[values == cut]
            tied = tied[np.argsort(self._table.seqs[tied], kind="stable")[: limit - above.size]]
            rows = np.concatenate([above, tied])
        scores, seqs = totals[rows], self._table.seqs[rows]
        order = np.lexsort((seqs, -scores))
        return [(int(seqs[i]), float(scores[i])) for i in order]

    def _scores(self, term_id: int) -> Postings64:
        """The live rows holding a term and its BM25 part in each (FTS5's formula in its order of operations,
        so equal scores stay bit-for-bit equal), kept until the next change: IDF and the average length
        depend on every row."""
        if self._scored_version != self._version or self._scored_entries > _SCORED_ENTRIES:
            self._scored, self._scored_version, self._scored_entries = {}, self._version, 0
        found = self._scored.get(term_id)
        if found is None:
            chunks = self._postings[term_id]
            if len(chunks) > 1:
                chunks[:] = [_merged(chunks)]
            positions, counts = chunks[0]
            lengths = self._lengths[positions].astype(np.float64)  # FTS5 computes in doubles
            live = lengths > 0
            tf = counts.astype(np.float64)
            if not live.all():  # else the postings' own positions are kept: no copy in the cache
                positions, tf, lengths = positions[live], tf[live], lengths[live]
            hits = positions.size
            idf = math.log((self._rows - hits + 0.5) / (hits + 0.5)) if hits else 0.0
            idf = idf if idf > 0 else 1e-6
            average = self._total / self._rows
            found = (positions, idf * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * lengths / average))))
            self._scored[term_id] = found
            self._scored_entries += hits
        return found


def _narrow(counts: npt.NDArray[np.integer[Any]]) -> Counts:
    """A term's counts in the fewest bytes that hold them: no memory at all when each is 1 (most terms of short
    memories: a read-only view of one byte), else 8 bits, else 16 (a memory's text is at most
    limits.max_text_chars long, so a count past 65,535 is clipped as it always was)."""
    if counts.size and int(counts.min()) == int(counts.max()) == 1:
        each_one: npt.NDArray[np.uint8] = np.broadcast_to(_ONE, counts.shape)
        return each_one
    if not counts.size or int(counts.max()) <= np.iinfo(np.uint8).max:
        return counts.astype(np.uint8)
    clipped: npt.NDArray[np.uint16] = np.minimum(counts, np.iinfo(np.uint16).max).astype(np.uint16)
    return clipped


def _merged(chunks: list[Postings]) -> Postings:
    if len(chunks) == 1:
        return chunks[0]
    return np.concatenate([c[0] for c in chunks]), _narrow(np.concatenate([c[1] for c in chunks]))
