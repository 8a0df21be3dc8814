"""Who a fact is about decides whether it may close a memory: a fact about someone else never replaces the user's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.types import MemoryItem, Scope, new_id
from memstrata.write.decide import decide, different_people
from memstrata.write.decisions import Candidate, NewFact, Update


@pytest.mark.parametrize(
    ("new", "old", "different"),
    [
        ("Dana owns the payments API now", "User owns the checkout service", True),  # a named colleague
        ("Sam moved to the search team", "Dana owns the payments API now", True),
        ("用户的妹妹在字节跳动工作", "用户在阿里巴巴工作", True),
        ("User's sister works at ByteDance", "User works at Alibaba", True),
        ("User now prefers tea", "User likes coffee", False),
        ("Lin works at ByteDance", "User's sister works at Alibaba", False),  # the sister may be Lin
        ("The office moved to Pudong", "User works in Jing'an", False),  # no subject: could be anyone's
        ("User's sister is named Lin", "User likes cats", False),  # naming a relative is the user's own fact
        # the bundled model closed the user's new job with the doctor's retest (医生 and 护士 share the work topic)
        ("用户的医生重新测试了他", "用户下个月要去华山医院当护士长", True),
        ("User's doctor retested him", "User works as a nurse at Ruijin Hospital", True),
        ("用户是医生", "用户是护士", False),  # the user's own job
        ("用户的老师叫王芳", "用户喜欢数学", False),  # naming them is the user's own fact
    ],
)
def test_a_fact_about_someone_else_is_told_apart(new: str, old: str, different: bool) -> None:
    assert different_people(new, old) is different


def _stored(text: str) -> MemoryItem:
    now = datetime(2025, 2, 10, tzinfo=UTC)
    return MemoryItem(id=new_id(), scope=Scope(user_id="u"), kind="fact", text=text, created_at=now, updated_at=now,
                      valid_from=now)  # fmt: skip


@pytest.mark.parametrize(
    ("new", "old", "closes"),
    [
        ("User no longer drinks oolong tea", "User no longer eats meat", False),  # the diet fact was closed
        ("User prefers coffee now", "User is vegetarian now", False),
        ("User moved to Shanghai", "User lives in Hangzhou", True),  # a shared topic: where they live
        ("用户讨厌猫", "用户喜欢猫", True),  # a shared word
        ("User's golden retriever Biscuit loves the snow", "User loves coffee", False),  # "loves" ties nothing
        ("User now only drinks tea", "User loves coffee", True),  # what they drink
    ],
)
def test_a_contradiction_needs_a_word_or_topic_in_common(new: str, old: str, closes: bool) -> None:
    """The bundled model called two close facts of one shape a contradiction, and the user's diet was forgotten."""
    fact = NewFact(text=new, kind="fact", confidence=0.9, message_ids=("t1",))
    resolved = decide(fact, [Candidate(_stored(old), similarity=0.6, evidence="similar (0.60)")], ["contradicts"])
    assert isinstance(resolved, Update) is closes
