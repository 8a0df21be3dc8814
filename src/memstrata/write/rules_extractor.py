"""Extraction without a model: bilingual patterns. The last fallback, honest about its limits.

It recognises explicit self-descriptions, preferences, plans, corrections and "remember that ..." /
"记住 ..." in Chinese and English, and keeps the matching sentence verbatim as the fact. It does not
understand paraphrase, negation scope, third parties or implied facts, and it never merges or
rewrites: a model does that far better. Confidence is set low (0.6) except for explicit requests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from memstrata.patterns import lazy_pattern
from memstrata.types import Message
from memstrata.write.decisions import Extraction, NewFact
from memstrata.write.facts import make_fact

if TYPE_CHECKING:
    from memstrata.write.extract import CallStats

_SENTENCE_END = lazy_pattern(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")

# Up to two adverbs or times between 我 and what the user says of themselves: "我现在", "我去年就", "我2023年3月".
_WHEN_ZH = (
    r"(?:现在|目前|已经|刚刚?|还|也|一直|就|才|最近|去年|今年|前年|上个?月|这个?月|上周|上星期|昨天|前天|前几天|前阵子"
    r"|年初|年底|\d{4}年(?:\d{1,2}月)?(?:份|底|初)?){0,2}"
)

# (kind, confidence, pattern). Order matters: the first match decides the kind of a sentence.
_RULES: list[tuple[str, float, re.Pattern[str]]] = [
    ("fact", 0.9, lazy_pattern(r"^(请)?(帮我)?记住|^(please )?remember( that)?\b|^note that\b", re.I)),
    (
        "preference",
        0.6,
        lazy_pattern(
            r"我(最|很|特别|比较|更|也|还|一直|现在|不太?)?(喜欢|爱|讨厌|偏好|不喜欢|受不了|想要)"
            r"|\bI (really |also |still |now |no longer |don't |do not )?"
            r"(like|love|prefer|enjoy|hate|dislike|can't stand)\b"
            r"|\bmy favou?rite\b|我最喜欢的",
            re.I,
        ),
    ),
    (
        "plan",
        0.6,
        lazy_pattern(
            r"我(打算|计划|准备|将要|要去|下周|明天|明年|想去)|\bI(?:'m| am) (going to|planning|about to)\b"
            r"|\bI (plan|intend|will|'ll)\b",
            re.I,
        ),
    ),
    (
        "fact",
        0.6,
        lazy_pattern(
            # an adverb or a time may stand between 我 and the verb ("我现在在腾讯工作", "我去年就搬到上海了": a
            # user trial's imported move was no fact), and Chinese drops the subject after a comma
            # ("我搬到深圳了，现在住在深圳")
            rf"我{_WHEN_ZH}(叫|是|住在|搬到|搬去|搬回|来自|在.{{1,12}}(工作|上班|上学|读书)"
            r"|对.{1,10}过敏|有一?(个|只|条|位)|的(名字|生日|工作))|^(现在|目前)(住在|在.{1,12}(工作|上班))"
            r"|\b(my name is|I am|I'm|I live|I work|I grew up|I was born|I have|I've got|I'm allergic|my \w+ is"
            r"|I (just |recently |have |'ve )?moved to|I now (live|work))\b",
            re.I,
        ),
    ),
    ("fact", 0.6, lazy_pattern(r"^(其实|更正|不对|纠正一下)|^(actually|correction|to correct)\b", re.I)),
]

# How the speaker feels at the moment, not a fact about them: "I'm so hungry right now", "今天好累啊". Kept as the
# turn it was said in (an episode), not as a long-term fact; "remember that ..." is kept whatever it says.
_PASSING_STATE = lazy_pattern(
    r"\bI(?:'m| am) (?:so |really |very |super |kinda |a bit |feeling )*(?:hungry|tired|sleepy|bored|thirsty"
    r"|stressed|exhausted|cold|hot|excited|sad|upset|annoyed|busy)(?: right now| now| today| tonight)?\W*$"
    r"|^(?:我)?(?:今天|现在|刚才)?(?:好|太|真|有点|特别)(?:累|困|饿|渴|烦|无聊|开心|难过|热|冷)",
    re.I,
)

_QUESTION = lazy_pattern(
    r"[?？]\s*$|^(do|does|did|can|could|would|what|why|how|where|when|who|is|are)\b|吗[?？]?$", re.I
)


def _sentences(text: str) -> list[str]:
    return [s.strip(" ,，") for s in _SENTENCE_END.split(text) if len(s.strip()) >= 3]


class RulesExtractor:
    name = "rules"

    def extract(self, turns: Sequence[Message], *, stats: CallStats | None = None) -> Extraction:
        facts: list[NewFact] = []
        for turn in turns:
            if turn.role != "user":
                continue  # assistant turns need judgement that patterns cannot give
            for sentence in _sentences(turn.content):
                if _QUESTION.search(sentence):
                    continue
                for kind, confidence, pattern in _RULES:
                    if pattern.search(sentence):
                        if confidence < 0.9 and _PASSING_STATE.search(sentence):
                            break
                        fact = make_fact(sentence, [turn], only_fact_of_turn=False)
                        if fact is not None:
                            facts.append(replace(fact, kind=kind, confidence=confidence))
                        break
        return Extraction(facts)
