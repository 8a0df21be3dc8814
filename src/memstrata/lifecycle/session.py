"""Working memory: the recent turns of one session that fit a token budget, newest kept first."""

from __future__ import annotations

import math
from collections.abc import Sequence

from memstrata.lexical import has_han
from memstrata.types import Message


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: about one token per Chinese character, four Latin characters per token."""
    han = sum(1 for char in text if has_han(char))
    return han + math.ceil((len(text) - han) / 4)


def within_budget(turns: Sequence[Message], budget_tokens: int) -> list[Message]:
    """The newest turns whose estimated tokens fit the budget, returned oldest first."""
    kept: list[Message] = []
    used = 0
    for turn in reversed(turns):
        cost = estimate_tokens(turn.content) + 4  # role and separators
        if used + cost > budget_tokens:
            break
        kept.append(turn)
        used += cost
    return list(reversed(kept))
