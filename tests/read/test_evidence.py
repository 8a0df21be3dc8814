"""Calibrated evidence and fusion, function by function (no store, no model)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstrata.lifecycle.timeparse import find_time_span
from memstrata.read.evidence import (
    cross_script,
    dense_evidence,
    keyword_coverage,
    keyword_evidence,
    match_form,
    memory_terms,
    query_terms,
    scripts,
    term_weights,
)
from memstrata.read.fuse import (
    TOPICAL_AT,
    EvidenceWeights,
    graph_evidence,
    in_time_range,
    rrf,
    score_fusion,
)
from memstrata.read.retrieve import asks_about_the_time_alone

UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_match_forms_are_the_keyword_index_terms() -> None:
    """A word matches here exactly when SQLite's porter-stemmed keyword index matched it: "ordering" found the
    memory for "order", but its keyword evidence was 0 while only plurals were folded."""
    for word, other in [("weekends", "weekend"), ("parties", "party"), ("ordering", "order"), ("Café", "cafe"),
                        ("glasses", "glass")]:  # fmt: skip
        assert match_form(word) == match_form(other), (word, other)
    assert match_form("bus") != match_form("is")
    assert match_form("weekend") in memory_terms("I go rock climbing every weekend.")
    assert query_terms("What sport do I play on weekends?") == tuple(map(match_form, ("sport", "play", "weekend")))
    assert query_terms("我周末喜欢什么运动？") == ("周末", "喜欢", "运动")


def test_rare_words_weigh_more_and_missing_words_weigh_most() -> None:
    matched = [frozenset({"caroline", "adoption"}), frozenset({"caroline"}), frozenset({"caroline", "dog"})]
    weights = term_weights(("caroline", "adoption", "agency"), matched, population=10)
    assert weights["caroline"] < weights["adoption"] < weights["agency"]
    both = keyword_coverage(weights, matched[0])
    name_only = keyword_coverage(weights, matched[1])
    assert 0 < name_only < both < 1
    assert keyword_coverage(weights, frozenset({"caroline", "adoption", "agency"})) == pytest.approx(1.0)
    assert keyword_coverage({}, frozenset({"x"})) == 0.0


def test_long_queries_also_count_the_share_of_the_memory_they_hold() -> None:
    long_query = {f"w{i}": 1.0 for i in range(30)}
    memory = frozenset({"w1", "w2", "w3", "other"})
    assert keyword_coverage(long_query, memory) == pytest.approx(0.75)  # 3 of the memory's 4 words
    short_query = {"w1": 1.0, "w9": 1.0}
    assert keyword_coverage(short_query, frozenset({"w1"})) == pytest.approx(0.5)


def test_keyword_evidence_needs_some_agreement_from_the_vectors() -> None:
    assert keyword_evidence(1.0, 5.0, 5.0, dense=0.5) == pytest.approx(1.0)
    assert keyword_evidence(1.0, 2.5, 5.0, dense=0.5) == pytest.approx(0.5)
    assert keyword_evidence(1.0, 5.0, 5.0, dense=0.0) == pytest.approx(0.3)  # shared words, unrelated meaning
    assert keyword_evidence(0.8, 0.0, 5.0, dense=1.0) == 0.0


def test_dense_evidence_maps_the_embedders_band_onto_0_1() -> None:
    assert dense_evidence(0.1, 0.1, 0.7) == 0.0
    assert dense_evidence(0.4, 0.1, 0.7) == pytest.approx(0.5)
    assert dense_evidence(0.95, 0.1, 0.7) == 1.0 and dense_evidence(-0.3, 0.1, 0.7) == 0.0
    with pytest.raises(ValueError, match="dense_ceiling"):
        dense_evidence(0.5, 0.7, 0.7)


def test_scripts_decide_whether_keyword_search_could_see_a_memory() -> None:
    assert scripts("我的猫叫团子") == {"han"} and scripts("my cat") == {"letters"}
    assert scripts("I use 微信") == {"han", "letters"} and scripts("2024!") == frozenset()
    english = scripts("What is my cat's name?")
    assert cross_script(english, "我的猫叫团子")
    assert not cross_script(english, "我的猫叫 Tuanzi")
    assert not cross_script(scripts("12:30"), "我的猫叫团子")  # no script in the query: nothing is blind


@given(keyword=UNIT, dense=UNIT, graph=UNIT, more=UNIT)
def test_score_fusion_is_bounded_and_monotone(keyword: float, dense: float, graph: float, more: float) -> None:
    weights = EvidenceWeights()
    base = score_fusion(keyword, dense, graph, weights, cross_script=False)
    assert 0.0 <= base <= 1.0
    ulp = 1e-12  # monotone up to float rounding (0.85 vs 0.8500000000000001)
    assert score_fusion(min(1.0, keyword + more), dense, graph, weights, cross_script=False) >= base - ulp
    assert score_fusion(keyword, min(1.0, dense + more), graph, weights, cross_script=False) >= base - ulp
    assert score_fusion(keyword, dense, min(1.0, graph + more), weights, cross_script=False) >= base
    assert score_fusion(0.0, dense, 0.0, weights, cross_script=True) == pytest.approx(weights.cross_script * dense)


def test_graph_evidence_halves_per_hop() -> None:
    weights = EvidenceWeights(graph=0.5)
    assert [graph_evidence(hop, weights) for hop in (None, 1, 2)] == [0.0, 0.5, 0.25]


@given(relevance=UNIT, other=UNIT, boost=UNIT)
def test_time_range_lifts_topical_hits_most(relevance: float, other: float, boost: float) -> None:
    lifted = in_time_range(relevance, boost)
    assert relevance <= lifted <= 1.0
    # a clearly topical memory gains the whole boost of what it lacks, one without evidence nothing, unless the
    # question asks about the time alone
    assert in_time_range(TOPICAL_AT, boost) == pytest.approx(TOPICAL_AT + (1 - TOPICAL_AT) * boost)
    assert in_time_range(0.0, boost) == 0.0
    assert in_time_range(0.0, boost, about_the_time=True) == pytest.approx(boost)
    if relevance < other:  # the boost keeps the order of memories inside the range (to the float's last bit)
        assert lifted <= in_time_range(other, boost) + 1e-12


def test_a_weak_match_inside_the_range_stays_below_a_clearly_topical_one_outside() -> None:
    """Chatter of last week (meaning alone, 0.10) was lifted to 0.55 over the week's topical answer (0.24)."""
    assert in_time_range(0.104, 0.5) < 0.238 < in_time_range(0.2, 0.5)


def test_rrf_is_kept_for_fusion_rrf() -> None:
    fused = rrf({"a": ["x", "y"], "b": ["y", "z"]}, k=1)
    assert list(fused) == ["y", "x", "z"]


@pytest.mark.parametrize(
    ("query", "alone"),
    [
        ("what did I do in 2024?", True),
        ("2024年我做了什么", True),
        ("What happened last week?", True),
        ("上周我去哪里出差了？", False),
        ("我下周去哪里？", True),
        ("What are my plans for next week?", True),
        ("我明天要干嘛？", True),
        ("Where did I travel in July 2025?", True),
        ("2025年7月我去哪玩了？", True),
        ("What paper did I read last week?", False),
        # everyday wordings read as topical before (found by a user trial)
        ("我上周末干了啥？", True),
        ("What did I get up to last weekend?", True),
        ("What did I accomplish in 2025?", True),
        ("去年我去了哪些地方玩？", True),
        ("Which places did I visit last year?", True),
        ("How many trips did I take in 2025?", True),
        ("What did I eat last weekend?", False),
    ],
)
def test_a_question_about_the_time_alone_is_told_from_one_about_a_topic(query: str, alone: bool) -> None:
    span = find_time_span(query, datetime(2026, 3, 1, tzinfo=UTC))
    assert span is not None and asks_about_the_time_alone(query, span) is alone
