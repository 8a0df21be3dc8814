"""Turns that are only small talk never reach a model: they hold nothing to remember, and a small model
asked about "今天天气不错" sometimes invents a fact from it. Only whole turns made of greetings, thanks,
acknowledgements, laughter or weather remarks match; anything else goes to extraction."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.types import Message

_PHRASE = (
    r"(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night)|thanks?(?: you)?(?: so much| a lot)?|ok(?:ay)?|"
    r"cool|great|nice|sure|got it|bye|see you|you too|same to you|lol|haha+|hmm+|how are you(?: doing)?(?: today)?|"
    r"(?:it'?s )?(?:a )?(?:nice|lovely|beautiful|great) (?:weather|day)(?: today)?(?:,? isn'?t it)?|"
    r"that'?s (?:funny|great|nice|cool)|"
    r"你好呀?|您好|嗨|哈喽|早上好|晚上好|晚安|谢谢(?:你|您)?|多谢|好的|好吧|嗯+|哦+|哈哈+|再见|拜拜|收到|明白了?|"
    r"今天天气(?:真|很|挺|特别)?(?:不错|好|很好|晴朗)(?:啊|呀|呢)?|天气(?:真|很)?(?:不错|好)|你(?:今天)?(?:怎么样|好吗))"
)
_SMALL_TALK = re.compile(rf"^\s*(?:{_PHRASE}[\s,，.。!！?？~～]*)+$", re.IGNORECASE)


def is_small_talk(text: str) -> bool:
    return bool(_SMALL_TALK.match(text))


# What an assistant says is worth a model call only when it commits to something or records a setting.
_COMMITMENT = re.compile(
    r"我会|我将|以后|下次|已为你|已帮你|已设置|已记下|提醒你|记住了?[：:，,]|"
    r"\b(I will|I'll|I've (set|scheduled|saved|booked|noted)|from now on|next time|reminder)\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]\s*$")


def select_turns(turns: Sequence[Message]) -> list[Message]:
    """The turns to show the extractor: user turns that are not small talk; assistant turns that commit to
    something; and an assistant question right before a kept user turn, so "林小雨" answering "你妹妹叫什么？"
    still reads as a fact. Returns [] when no turn holds anything to extract."""
    kept_user = {i for i, turn in enumerate(turns) if turn.role == "user" and not is_small_talk(turn.content)}
    selected = []
    for i, turn in enumerate(turns):
        if i in kept_user:
            selected.append(turn)
        elif turn.role == "assistant" and not is_small_talk(turn.content):
            asks = i + 1 in kept_user and bool(_QUESTION.search(turn.content)) and len(turn.content) <= 300
            if asks or _COMMITMENT.search(turn.content):
                selected.append(turn)
    if not kept_user and not any(_COMMITMENT.search(turn.content) for turn in selected):
        return []
    return selected
