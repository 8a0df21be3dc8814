"""Retrieval metrics, each with the definition of the benchmark it belongs to.

- LoCoMo (paper): recall@k = |evidence ∩ top-k| / |evidence|, 1 when a question has no evidence.
- hit_any@k: 1 when any evidence id is in the top k (1 when there is no evidence, as for recall).
- NDCG@k (binary): DCG = Σ 1/log2(rank+1) over relevant hits in the top k; the ideal DCG puts
  min(|relevant|, k) relevant items first. Used for LoCoMo and MADial.
- MADial official (``embedding_score_new.py``): recall as above; its "nDCG" normalises by the
  best re-ordering of the *retrieved* top k, reported separately as ``ndcg_madial``.
- LongMemEval official (``src/retrieval/eval_utils.py``): recall_any / recall_all over the top k,
  ndcg_any with DCG = rel_1 + Σ_{i≥2} rel_i / log2(i), and turn→session conversion that widens k
  until k distinct sessions are covered.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import numpy as np

LOCOMO_KS = (5, 10, 25, 50)
MADIAL_KS = (1, 3, 5, 10, 20)
LME_KS = (1, 3, 5, 10, 30, 50)


def recall_at_k(relevant: Collection[str], ranked: Sequence[str], k: int) -> float:
    if not relevant:
        return 1.0
    return len(set(ranked[:k]) & set(relevant)) / len(set(relevant))


def hit_any_at_k(relevant: Collection[str], ranked: Sequence[str], k: int) -> float:
    if not relevant:
        return 1.0
    top = set(ranked[:k])
    return float(any(r in top for r in relevant))


def ndcg_at_k(relevant: Collection[str], ranked: Sequence[str], k: int) -> float:
    wanted = set(relevant)
    if not wanted:
        return 1.0
    dcg = sum(1.0 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]) if doc in wanted)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(wanted), k)))
    return dcg / ideal


def ndcg_madial(relevant: Collection[str], ranked: Sequence[str], k: int) -> float:
    """MADial's own variant: the ideal is the best re-ordering of the retrieved top k."""
    rels = [1.0 if doc in set(relevant) else 0.0 for doc in ranked[:k]]
    ideal = sum(r / math.log2(i + 2) for i, r in enumerate(sorted(rels, reverse=True)))
    if not ideal:
        return 0.0
    return sum(r / math.log2(i + 2) for i, r in enumerate(rels)) / ideal


# --- LongMemEval --------------------------------------------------------------------------
def _lme_dcg(relevances: Sequence[float], k: int) -> float:
    rel = np.asarray(relevances, dtype=float)[:k]
    if not rel.size:
        return 0.0
    return float(rel[0] + np.sum(rel[1:] / np.log2(np.arange(2, rel.size + 1))))


def lme_evaluate(ranking: Sequence[int], gold: Collection[str], corpus_ids: Sequence[str], k: int) -> dict[str, float]:
    """``ranking`` indexes into ``corpus_ids`` (best first); a system may return fewer than all."""
    recalled = {corpus_ids[i] for i in ranking[:k]}
    relevances = [1.0 if doc in gold else 0.0 for doc in corpus_ids]
    ideal = _lme_dcg(sorted(relevances, reverse=True), k)
    actual = _lme_dcg([relevances[i] for i in ranking[:k]], k)
    return {
        f"recall_any@{k}": float(any(doc in recalled for doc in gold)),
        f"recall_all@{k}": float(all(doc in recalled for doc in gold)),
        f"ndcg_any@{k}": actual / ideal if ideal else 0.0,
    }


def lme_turn_to_session(
    ranking: Sequence[int], gold_turns: Collection[str], corpus_ids: Sequence[str], k: int
) -> dict[str, float]:
    """Session-level scores from a turn ranking, exactly as LongMemEval's turn2session."""

    def strip(doc_id: str) -> str:
        return "_".join(doc_id.split("_")[:-1])

    gold = {strip(doc) for doc in gold_turns}
    session_ids = [strip(doc) for doc in corpus_ids]
    effective = k
    while effective <= len(session_ids) and len({session_ids[i] for i in ranking[:effective]}) < k:
        effective += 1
    scores = lme_evaluate(ranking, gold, session_ids, effective)
    return {name.replace(f"@{effective}", f"@{k}"): value for name, value in scores.items()}


def mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else float("nan")


def percentiles(samples_ms: Sequence[float]) -> dict[str, float]:
    arr = np.asarray(samples_ms, dtype=float)
    if not arr.size:
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "p99_ms": float("nan"), "mean_ms": float("nan")}
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {"p50_ms": float(p50), "p95_ms": float(p95), "p99_ms": float(p99), "mean_ms": float(arr.mean())}
