"""Fusion: one relevance per candidate from the keyword, dense, graph and time signals.

Two ways, chosen by ``search.fusion``:

- ``"score"`` (default): calibrated evidence (read/evidence.py) combined so a clearly better match
  keeps its lead and the number means the same in every query:
  ``base = (wk * keyword + wd * dense) / (wk + wd)``, except for a memory written in another script
  than the query (a Chinese memory for an English question): keyword search cannot see it, so
  the missing keyword evidence says nothing and ``base = c * dense`` (``c`` = 0.85: meaning alone is a little
  less evidence than meaning and words together). A memory reached through the
  query's entities in the graph then gains ``(1 - base) * graph`` (``graph = graph_evidence / hop``).
  Giving dense evidence a say of its own in one language as well (``max(mean, g * dense)``) cost
  LoCoMo and MADial recall for every g above dense's weight in the mean (bench/results).
  Measured on the dev sets it beat rank fusion on LoCoMo and on MADial zh and en
  (bench/results/*-ranking.md).
- ``"rrf"``: weighted reciprocal rank fusion, the first release's ranking. Ranks throw away how
  much better one match is; kept for comparison and for stores whose scores are not comparable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


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


@dataclass(frozen=True)
class EvidenceWeights:
    """How much each calibrated signal counts in score fusion (see module docstring)."""

    keyword: float = 0.6
    dense: float = 0.4
    graph: float = 0.5  # relevance a one-hop graph hit gets from the graph alone
    # A memory in another script than the query has meaning alone to show; it counts this share of its dense
    # evidence. At 1.0 a Chinese memory matching an English question's meaning scored as if its words matched
    # too, and outranked a newer English memory that matched both (an old phone number 0.96 over the new one
    # 0.94). It only orders cross-script hits against same-script ones; among themselves their order holds.
    cross_script: float = 0.85


OFF_TOPIC_GRAPH = 0.25  # of the graph evidence, for an edge of a relation other than those the query asks for


def graph_evidence(hop: int | None, weights: EvidenceWeights, *, on_topic: bool = True) -> float:
    """Evidence of a memory the graph walk reached in ``hop`` steps; an edge of a relation the question does not ask
    for ("我哥 has_pet 金毛" for "我哥住在哪？") is weak evidence: the dog led where he lives on it alone."""
    if hop is None:
        return 0.0
    return weights.graph / max(1, hop) * (1.0 if on_topic else OFF_TOPIC_GRAPH)


def score_fusion(keyword: float, dense: float, graph: float, weights: EvidenceWeights, *, cross_script: bool) -> float:
    """Relevance in [0, 1] from evidence in [0, 1]: the weighted mean of keyword and dense evidence
    (a share of dense alone across scripts), raised toward 1 by graph evidence (a noisy-or, so the graph alone
    can also carry a hit)."""
    total = weights.keyword + weights.dense
    if cross_script:
        base = weights.cross_script * dense
    else:
        base = (weights.keyword * keyword + weights.dense * dense) / total if total > 0 else 0.0
    return base + (1.0 - base) * graph


TOPICAL_AT = 0.3  # relevance from which a memory in the named range gains the whole boost


def in_time_range(relevance: float, boost: float, *, about_the_time: bool = False) -> float:
    """Relevance of a memory inside the time range the query names ("last week", "上个月").

    It gains up to ``boost`` of its missing relevance: fully once its own relevance reaches ``TOPICAL_AT``, less
    below it, with the square of the shortfall, and nothing without evidence of its own. Before, every memory of
    the range gained the whole boost at the cutoff and a share below it: "哈哈哈哈笑死我了" from last week (a weak
    match of meaning alone, 0.10 -> 0.53) answered "上周我去哪里出差了？" above the trip (0.24), and "what did the
    vet say last week?" answered with that week's chatter where "what did the vet say?" answered nothing.
    ``about_the_time``: the question has no topic but the time ("what did I do in 2024?"), so every memory of the
    range is on topic and gains the whole boost.
    """
    boost = min(1.0, boost)
    topical = 1.0 if about_the_time else min(1.0, relevance / TOPICAL_AT) ** 2
    return relevance + (1.0 - relevance) * boost * topical


def outside_the_time(relevance: float, boost: float) -> float:
    """Relevance of a memory outside the range a question about that time alone names ("上周末我做了什么？"): the
    words it shares with the question are the question's filler ("做" matched "我前天在家做了红烧肉", which then
    answered above last weekend's hike), so it keeps only ``1 - boost`` of its relevance and answers below the
    range's memories."""
    return relevance * (1.0 - min(1.0, boost))


NAMED_KEY_BOOST = 0.5


def for_named_key(relevance: float) -> float:
    """Relevance of a key fact whose key the question names by its words ("Where do I live?" and lin:home:city, see
    read/named_keys.py): a structured fact about what is asked gains half its missing relevance, by the same
    measure of its own evidence as a memory inside a named time range (a key fact merely sharing a word, "name" in
    "what is my dog's name?", gains little). Before, chatter sharing its words ("I live for the weekend haha",
    0.81) and log lines all mentioning its topic ranked above it."""
    return in_time_range(relevance, NAMED_KEY_BOOST)


def relevance_floor(minimum: float, best: float, share: float | None) -> float:
    """The relevance a hit needs: ``minimum``, which also decides whether the best hit answers at all; once it does,
    ``share`` of the best hit's relevance where a share applies (:func:`memstrata.read.pipeline.below_best`)."""
    return minimum if share is None or best < minimum else min(minimum, share * best)
