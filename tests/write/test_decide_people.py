"""Who a fact is about decides whether it may close a memory: a fact about someone else never replaces the user's."""

from __future__ import annotations

import pytest

from memstrata.write.decide import different_people


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
    ],
)
def test_a_fact_about_someone_else_is_told_apart(new: str, old: str, different: bool) -> None:
    assert different_people(new, old) is different
