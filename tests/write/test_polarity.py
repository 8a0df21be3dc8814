"""A fact turning its turn's polarity (write/polarity.py): affirming what the turn denies, or denying what the turn
says holds now, is caught; a fact rewording, narrowing, continuing or stating the end of what the turn says is left
alone."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstrata.write.polarity import denied_now, dropped_denials

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


REVERSED = [
    # the bundled model's own mistake: a new allergy stored as its opposite
    ("Actually I'm not allergic to penicillin anymore, the doctor retested me. 我现在对头孢过敏",
     "用户实际上不再对头孢过敏", ["头孢", "过敏"]),
    ("I now really like tea", "User does not like tea", ["like", "tea"]),
    ("我现在很喜欢喝茶", "用户不再喜欢茶", ["喜欢", "茶"]),
]  # fmt: skip

STATED_ENDINGS = [
    ("我以前对花生过敏，现在对虾过敏", "用户不再对花生过敏"),  # 过敏 is said of the past too
    ("I now live in Shanghai, I used to live in Beijing", "User no longer lives in Beijing"),
    ("I moved to Denver from Boston", "User no longer lives in Boston"),  # nothing said of now
    ("I don't drink coffee anymore, now I only drink tea", "User no longer drinks coffee"),
    ("我现在喝茶，不喝咖啡了", "用户现在不喝咖啡"),
    ("I left Google, now I work at Stripe", "User no longer works at Google"),
    ("我现在在Stripe工作", "用户不再在谷歌工作"),  # one shared word says too little
]


Check = Callable[[str, str], list[str]]
CAUGHT = [(dropped_denials, *case) for case in DROPPED] + [(denied_now, *case) for case in REVERSED]
LEFT = [(dropped_denials, *case) for case in KEPT] + [(denied_now, *case) for case in STATED_ENDINGS]


@pytest.mark.parametrize(("check", "turn", "fact", "words"), CAUGHT)
def test_a_fact_turning_its_turns_polarity_is_caught(check: Check, turn: str, fact: str, words: list[str]) -> None:
    """dropped_denials: the fact affirms what the turn denies; denied_now: it denies what the turn says holds now."""
    assert check(fact, turn) == words


@pytest.mark.parametrize(("check", "turn", "fact"), LEFT)
def test_a_fact_rewording_continuing_or_ending_its_turn_is_left_alone(check: Check, turn: str, fact: str) -> None:
    assert check(fact, turn) == []
