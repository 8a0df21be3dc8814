"""Turns that are only small talk (memstrata/smalltalk.py) never reach a model: they hold nothing to remember,
and a small model asked about "今天天气不错" sometimes invents a fact from it; anything else goes to extraction."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.patterns import lazy_pattern
from memstrata.smalltalk import is_small_talk
from memstrata.types import Message

# What an assistant says is worth a model call only when it commits to something or records a setting.
_COMMITMENT = lazy_pattern(
    r"我会|我将|以后|下次|已为你|已帮你|已设置|已记下|提醒你|记住了?[：:，,]|"
    r"\b(I will|I'll|I've (set|scheduled|saved|booked|noted)|from now on|next time|reminder)\b",
    re.IGNORECASE,
)
_QUESTION = lazy_pattern(r"[?？]\s*$")


def _has_words(text: str) -> bool:
    """A letter, digit or character: a turn of emoji or punctuation alone ("🎉🎉🎉") says nothing to remember (it cost a
    model call: a user trial)."""
    return any(character.isalnum() for character in text)


def select_turns(turns: Sequence[Message]) -> list[Message]:
    """The turns to show the extractor: user turns that are not small talk; assistant turns that commit to
    something; and an assistant question right before a kept user turn, so "林小雨" answering "你妹妹叫什么？"
    still reads as a fact. Returns [] when no turn holds anything to extract."""
    kept_user = {i for i, turn in enumerate(turns)
                 if turn.role == "user" and _has_words(turn.content) and not is_small_talk(turn.content)}  # fmt: skip
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
