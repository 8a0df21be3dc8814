"""The rerank step: the configured reranker reorders the best few fused hits, once, after the last round.

A hit's new score is ``(1 - weight) * score + weight * reranker_score``, and only the top ``top_n`` move
(among themselves): a reranker sees few candidates, and what it did not see keeps its place. A reranker
that fails leaves the fused order as it was, and the trace says why.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.deep.trace import StepTrace
from memstrata.errors import ProviderError
from memstrata.providers.rerank import Reranker
from memstrata.types import SearchHit


def rerank_hits(
    hits: Sequence[SearchHit], question: str, reranker: Reranker, *, top_n: int, weight: float, round_number: int
) -> tuple[list[SearchHit], StepTrace]:
    head, rest = list(hits[:top_n]), list(hits[top_n:])
    if len(head) < 2:
        return list(hits), StepTrace(step="rerank", round=round_number, source="model", model_id=reranker.model_id,
                                     output=("fewer than 2 candidates: nothing to reorder",))  # fmt: skip
    try:
        reranked = reranker.rerank(question, [hit.memory.text for hit in head])
    except ProviderError as exc:
        step = StepTrace(step="rerank", round=round_number, source="heuristic", model_id=reranker.model_id, calls=1,
                         fallback=f"{type(exc).__name__}: {exc}"[:500], output=("fused order kept",))  # fmt: skip
        return list(hits), step
    rescored = []
    for hit, said in zip(head, reranked.scores, strict=True):
        score = (1.0 - weight) * hit.score + weight * said
        breakdown = hit.breakdown.model_copy(update={"final": score})
        rescored.append(hit.model_copy(update={"score": score, "breakdown": breakdown}))
    rescored.sort(key=lambda hit: hit.score, reverse=True)
    step = StepTrace(
        step="rerank",
        round=round_number,
        source="model",
        model_id=reranker.model_id,
        calls=reranked.calls,
        output=tuple(hit.id for hit in rescored),
        prompt_tokens=reranked.usage.prompt_tokens,
        completion_tokens=reranked.usage.completion_tokens,
        seconds=round(reranked.seconds, 3),
    )
    return rescored + rest, step
