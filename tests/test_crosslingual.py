"""A Chinese question finds the relevant English memory first and the reverse (real embedder, real store),
with the default relevance cutoff: similarity alone must carry a memory in another script."""

from __future__ import annotations

import pytest

from memstrata import Memory

MEMORIES = [
    "I am allergic to peanuts.",
    "My sister lives in Vancouver and works as a nurse.",
    "I go rock climbing every weekend.",
    "我最喜欢的饮料是乌龙茶。",
    "我在学习弹钢琴，每周上两节课。",
    "我们公司下个月搬到深圳。",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("我对什么食物过敏？", "I am allergic to peanuts."),
        ("我姐姐住在哪里？", "My sister lives in Vancouver and works as a nurse."),
        ("我周末喜欢什么运动？", "I go rock climbing every weekend."),
        ("What is my favourite drink?", "我最喜欢的饮料是乌龙茶。"),
        ("Which instrument am I learning?", "我在学习弹钢琴，每周上两节课。"),
        ("Where is the company moving?", "我们公司下个月搬到深圳。"),
    ],
)
def test_cross_lingual_retrieval(memory: Memory, query: str, expected: str) -> None:
    memory.add(MEMORIES, user_id="u1")
    hits = memory.search(query, user_id="u1", limit=3)
    assert hits[0].text == expected
    assert hits[0].breakdown.relevance >= 0.1 and hits[0].score >= max(hit.score for hit in hits)


def test_an_unrelated_question_in_either_language_finds_nothing(memory: Memory) -> None:
    memory.add(MEMORIES, user_id="u1")
    assert memory.search("How many moons does Neptune have?", user_id="u1") == []
    assert memory.search("海王星有几颗卫星？", user_id="u1") == []
