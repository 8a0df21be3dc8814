"""Whole turns of small talk (memstrata/smalltalk.py): they hold nothing to remember and answer no question."""

from __future__ import annotations

import pytest

from memstrata.smalltalk import is_small_talk


@pytest.mark.parametrize(
    "text",
    [
        "记下了。",
        "Noted!",
        "Bye Nate!",  # said to someone by name
        "Thanks, Evan! Take care, bye!",
        "Thanks, Sam! Your support means a lot. I'll keep you updated. Take care, bye!",
        "Let me know how it goes!",
        "Cool, Sam. I'll keep you posted. Talk soon!",
        "Sure thing! Bye for now!",
        "Nice to meet you, Daniel!",  # the first memory of a context for cooking for Daniel (a user trial)
        "很高兴认识你！",
        "好的，我记下了。",  # replies that only say they heard took lines of a context (a user trial)
        "太好了！",
    ],
)
def test_pleasantries_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "Good luck with the exam on Friday!",  # the exam is worth remembering
        "Thanks, I'll try the coconut ice cream recipe",
        "Bye Nate, see you at the Kyoto game jam",
        "我明天去上海出差，再见",
        "太好了，我终于拿到 offer 了",
        "好的，我记下了：朵朵对芒果过敏。",
        "Nice to meet you at the conference, where we talked about Rust",
    ],
)
def test_a_turn_that_says_anything_more_is_not(text: str) -> None:
    assert not is_small_talk(text)
