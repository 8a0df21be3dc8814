"""A fact affirming what its turn denies (write/polarity.py): caught where the model drops the negation, and left
alone where a fact rewords, narrows or continues the turn."""

from __future__ import annotations

import pytest

from memstrata.write.polarity import dropped_denials

DROPPED = [
    # the bundled model's own mistake: a correction turned around
    ("其实我不对花生过敏，是对虾过敏，上次搞错了。", "用户对花生过敏，不对虾过敏", ["花生"]),
    ("其实我不对花生过敏，是对虾过敏。", "用户对花生过敏", ["花生"]),
    ("我没有养狗，我养的是一只猫。", "用户养狗", ["养狗"]),  # the segmenter cuts 没有养狗 as 有养 / 狗
    ("我从来没去过日本，明年想去。", "用户去过日本", ["去过", "日本"]),
    ("Actually I'm not allergic to peanuts, I'm allergic to shrimp.", "User is allergic to peanuts", ["peanut"]),
    ("My sister isn’t a doctor, she's a nurse.", "User's sister is a doctor", ["doctor"]),
    ("Sorry, I misspoke: I work at Meta, not Google.", "User works at Google", ["googl"]),
    ("I don't have any kids.", "User has kids", ["kid"]),
]

KEPT = [
    ("其实我不对花生过敏，是对虾过敏。", "用户对对虾过敏"),
    ("其实我不对花生过敏，是对虾过敏。", "用户不对花生过敏"),
    ("我以前不喜欢吃辣，现在很喜欢", "用户现在很喜欢吃辣"),  # the turn's affirmed clause, said in full
    ("I don't speak Japanese yet but I'm learning it", "User is learning Japanese"),
    ("没想到我竟然喜欢上了跑步", "用户喜欢跑步"),  # 没想到: "unexpectedly", no denial
    ("这家店不错，我很喜欢", "用户很喜欢这家店"),  # 不错: "good"
    ("我不确定我是不是对花生过敏", "用户可能对花生过敏"),  # a hedge says no more than the turn
    ("我从来没去过日本，明年想去。", "用户明年想去日本"),  # a plan affirms nothing yet
    ("I don't live in Boston anymore, I moved to Denver.", "User used to live in Boston"),
    ("I don't live in Boston anymore, I moved to Denver.", "User moved to Denver"),
    ("I'm allergic to shrimp and not peanuts", "User is allergic to shrimp"),
    ("I not only play guitar but also piano", "User plays guitar"),
    ("No, I love spicy food", "User loves spicy food"),
    ("我没在阿里了，去了字节跳动工作", "用户在字节跳动工作"),
    ("I can't stand running, but I enjoy hiking with friends", "User enjoys hiking with friends"),
    ("我不吃肉，是素食者", "用户不吃肉，是素食者"),
]


@pytest.mark.parametrize(("turn", "fact", "words"), DROPPED)
def test_a_fact_affirming_what_its_turn_denies_is_caught(turn: str, fact: str, words: list[str]) -> None:
    assert dropped_denials(fact, turn) == words


@pytest.mark.parametrize(("turn", "fact"), KEPT)
def test_a_fact_rewording_or_continuing_its_turn_is_left_alone(turn: str, fact: str) -> None:
    assert dropped_denials(fact, turn) == []
