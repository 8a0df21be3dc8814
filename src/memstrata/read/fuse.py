"""Reciprocal rank fusion: combine ranked lists by rank, not by incomparable raw scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(
    ranked_lists: Mapping[str, Sequence[str]], k: int = 60, weights: Mapping[str, float] | None = None
) -> dict[str, float]:
    """score(d) = sum over lists of weight / (k + rank(d)), ranks starting at 1; best first."""
    scores: dict[str, float] = {}
    for name, ranking in ranked_lists.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return dict(sorted(scores.items(), key=lambda pair: pair[1], reverse=True))


def max_rrf(total_weight: float, k: int = 60) -> float:
    """The fused score of an item ranked first everywhere: used to scale scores into [0, 1]."""
    return total_weight / (k + 1)
