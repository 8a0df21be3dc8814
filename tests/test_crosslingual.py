"""A Chinese question finds the relevant English memory and the reverse (real embedder, real store)."""

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
    assert expected in [hit.text for hit in hits]
    assert hits[0].text == expected or hits[0].breakdown.keyword_rank is not None
