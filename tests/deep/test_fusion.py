"""Fusing the hits of several queries: what each kind of query may contribute (no store, no model)."""

from __future__ import annotations

from memstrata.deep.fusion import WEIGHTS, Pool
from memstrata.types import MemoryItem, Scope, ScoreBreakdown, SearchHit, new_id, utcnow


def _hit(text: str, relevance: float) -> SearchHit:
    now = utcnow()
    item = MemoryItem(id=new_id(), scope=Scope(user_id="u"), kind="episode", text=text, created_at=now,
                      updated_at=now, valid_from=now)  # fmt: skip
    breakdown = ScoreBreakdown(relevance=relevance, fused=relevance, final=relevance)
    return SearchHit(memory=item, score=relevance, breakdown=breakdown)


def test_a_name_probe_never_lifts_a_look_alike_over_what_the_question_found() -> None:
    """The offline evaluator probes with a name alone; every memory holding the name matches it well, so its hits
    must stay below a plain answer the question itself found (measured: at weight 0.6 they cost deep search
    without a model 0.08 of LoCoMo recall@10)."""
    answer = _hit("Caroline: I went to the LGBTQ support group yesterday.", 0.4)
    look_alike = _hit("Caroline: Thanks, Mel!", 0.95)
    pool = Pool()
    pool.add([answer], WEIGHTS["question"])
    pool.add([look_alike], WEIGHTS["keywords"])
    assert [hit.text for hit in pool.ranked(0.1)] == [answer.text, look_alike.text]


def test_agreement_between_queries_lifts_a_memory_but_never_past_1() -> None:
    both = _hit("我上周去西湖划船了", 0.8)
    pool = Pool()
    pool.add([both], WEIGHTS["question"])
    pool.add([both], WEIGHTS["multi_query"])
    (ranked,) = pool.ranked(0.1)
    assert 0.8 < ranked.breakdown.relevance < 1.0
