"""BM25 baselines: bm25s over word tokens (rjieba for Chinese), and the LoCoMo reference variant.

``BM25`` is the baseline a user would build in ten lines: lower-cased word tokens, Chinese runs
cut by rjieba, English and Chinese stop words removed, bm25s's Lucene scoring. ``WhitespaceBM25``
reproduces the reference number in ``data/README.md`` (rank-bm25 Okapi over whitespace tokens of
the paper's ``speaker said, "text"`` unit), to check that the metric code agrees with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import bm25s
import numpy as np
import rjieba
from bm25s.stopwords import STOPWORDS_CHINESE, STOPWORDS_EN
from rank_bm25 import BM25Okapi

from bench.systems import Doc

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_HAN}]+|[^\W_{_HAN}]+", re.UNICODE)
_HAN_RUN = re.compile(rf"[{_HAN}]+")
_STOP = frozenset(STOPWORDS_EN) | frozenset(STOPWORDS_CHINESE)


@lru_cache(maxsize=100_000)
def _cut(run: str) -> tuple[str, ...]:
    return tuple(rjieba.cut(run))


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for piece in _TOKEN.findall(text.lower()):
        words = _cut(piece) if _HAN_RUN.fullmatch(piece) else (piece,)
        tokens.extend(w for w in words if w.strip() and w not in _STOP)
    return tokens


class BM25:
    """bm25s (Lucene BM25, k1=1.5, b=0.75) over word tokens, one index per scope."""

    name = "bm25"

    def __init__(self) -> None:
        self._indexes: dict[str, tuple[bm25s.BM25, list[str]]] = {}

    def index(self, scope: str, docs: Sequence[Doc]) -> None:
        corpus = [tokenize(doc.text) or ["<empty>"] for doc in docs]
        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        self._indexes[scope] = (model, [doc.doc_id for doc in docs])

    def search(self, scope: str, query: str, k: int) -> list[str]:
        model, ids = self._indexes[scope]
        tokens = tokenize(query)
        if not tokens:
            return []
        scores = np.asarray(model.get_scores(tokens))
        order = np.argsort(-scores, kind="stable")[: min(k, len(ids))]
        return [ids[i] for i in order if scores[i] > 0]  # a keyword engine returns matches only


class WhitespaceBM25:
    """rank-bm25 Okapi over ``text.split(" ")``: the LoCoMo reference baseline (docs carry ``official``)."""

    name = "bm25-whitespace"

    def __init__(self) -> None:
        self._indexes: dict[str, tuple[BM25Okapi, list[str]]] = {}

    def index(self, scope: str, docs: Sequence[Doc]) -> None:
        corpus = [(doc.official or doc.text).split(" ") for doc in docs]
        self._indexes[scope] = (BM25Okapi(corpus), [doc.doc_id for doc in docs])

    def search(self, scope: str, query: str, k: int) -> list[str]:
        model, ids = self._indexes[scope]
        scores = np.asarray(model.get_scores(query.split(" ")))
        return [ids[i] for i in np.argsort(scores)[::-1][:k]]  # the reference script's ordering, ties included
