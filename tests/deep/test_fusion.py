"""Fusing the hits of several queries: what each kind of query may contribute (no store, no model)."""

from __future__ import annotations

import pytest

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
    pool.add([both], WEIGHTS["question"], anchor=True)
    pool.add([both], WEIGHTS["multi_query"])
    (ranked,) = pool.ranked(0.1)
    assert 0.8 < ranked.breakdown.relevance < 1.0


def test_rewrites_agreeing_with_each_other_do_not_lift_a_look_alike_over_the_questions_answer() -> None:
    """Paraphrases and a hypothetical answer come from one reading of the question: a look-alike they all
    match gets no agreement bonus, so it stays below the answer the question itself found (with the bonus
    it would reach 0.495 + 0.505 * 0.5 * 0.495 = 0.62)."""
    answer = _hit("Lisa: I came in last at the sports meet.", 0.5)
    look_alike = _hit("Lisa: I want to run faster, I am training every day.", 0.55)
    pool = Pool()
    pool.add([answer], WEIGHTS["question"], anchor=True)
    for origin in ("multi_query", "multi_query", "hyde"):
        pool.add([look_alike], WEIGHTS[origin])
    ranked = pool.ranked(0.1)
    assert [hit.text for hit in ranked] == [answer.text, look_alike.text]
    assert ranked[1].breakdown.relevance == pytest.approx(0.55 * WEIGHTS["multi_query"])


def test_a_conversation_keeps_what_its_search_kept_below_the_best_hit() -> None:
    """Fast search keeps hits of a conversation down to a fifth of its best one's relevance (read/pipeline.py); the
    deep pool dropped every one under the bar again, so deep returned fewer memories than fast for the same text."""
    best, related = _hit("Sprained my ankle playing basketball", 0.3), _hit("我周末喜欢打羽毛球", 0.08)
    faint = _hit("Had noodles for lunch", 0.05)
    pool = Pool()
    pool.add([best, related, faint], WEIGHTS["original"], anchor=True)
    assert [hit.text for hit in pool.ranked(0.1)] == [best.text]  # a question: the bar alone
    assert [hit.text for hit in pool.ranked(0.1, 0.2)] == [best.text, related.text]  # 0.08 >= 0.2 x 0.3; 0.05 is not
    assert pool.ranked(0.4, 0.2) == []  # the bar still decides whether anything answers
