"""Reciprocal rank fusion: combine ranked lists by rank, not by incomparable raw scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(ranked_lists: Mapping[str, Sequence[str]], k: int = 60) -> dict[str, float]:
    """score(d) = sum over lists of 1 / (k + rank(d)), ranks starting at 1; best first."""
    scores: dict[str, float] = {}
    for ranking in ranked_lists.values():
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return dict(sorted(scores.items(), key=lambda pair: pair[1], reverse=True))


def max_rrf(list_count: int, k: int = 60) -> float:
    """The fused score of an item ranked first everywhere: used to scale scores into [0, 1]."""
    return list_count / (k + 1)
