"""Token counting for chunk sizes: the same tokenizer-free estimate the rest of memstrata uses.

No tokenizer file can be downloaded here, and chunk sizes only need to be right to within a few
percent: about one token per Chinese character and four Latin characters per token (Qwen2.5's and
OpenAI's tokenizers both land near that on mixed zh/en text). It matches
``lifecycle.session.estimate_tokens`` exactly, counted with one regex pass instead of a per-character
check, because chunkers call it on every candidate split.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from memstrata.han import HAN_CHAR

TokenCounter = Callable[[str], int]

_HAN = HAN_CHAR


def count_tokens(text: str) -> int:
    han = len(_HAN.findall(text))
    return han + math.ceil((len(text) - han) / 4)


def char_costs(text: str) -> list[float]:
    """The estimated token cost of each character, so a span's cost is a sum (used to cut by tokens)."""
    return [1.0 if _HAN.match(char) else 0.25 for char in text]
