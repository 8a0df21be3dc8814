"""When to spend a model call: every turn, every N turns, or when the turns carry a cue.

Turns that do not trigger wait (durably, as 'waiting' jobs) and are extracted together with the
next batch that does, or on flush(). Cues are words that signal something worth remembering:
preferences, intentions, corrections, self-descriptions and explicit "remember".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from memstrata.patterns import lazy_pattern
from memstrata.types import Message

TriggerPolicy = Literal["every_turn", "every_n", "cues"]

_CUES = lazy_pattern(
    r"记住|别忘|喜欢|讨厌|偏好|爱吃|不吃|过敏|打算|计划|准备|决定|以后|其实|不对|更正|改成|换成|搬到|搬家|我叫|我是|我在|我住|"
    r"我的|生日|工作|\bremember\b|\bdon'?t forget\b|\b(like|love|prefer|hate|enjoy|dislike)s?\b|\ballergic\b|"
    r"\b(plan|planning|going to|decided|will)\b|\bactually\b|\bcorrection\b|\bswitch(ed)?\b|\bmoved?\b|"
    r"\bmy (name|birthday|job|wife|husband|partner|kids?|son|daughter)\b|\bI(?:'m| am| work| live)\b",
    re.IGNORECASE,
)


def has_cue(turns: Sequence[Message]) -> bool:
    return any(_CUES.search(turn.content) for turn in turns if turn.role in ("user", "assistant"))


def should_trigger(policy: TriggerPolicy, new_turns: Sequence[Message], waiting_turns: int, every_n: int) -> bool:
    """``waiting_turns`` counts earlier turns of the scope not yet extracted."""
    total = waiting_turns + len(new_turns)
    if policy == "every_turn":
        return True
    if policy == "every_n":
        return total >= every_n
    return has_cue(new_turns) or total >= every_n
