"""The code points memstrata reads as Chinese characters (Han), defined once.

CJK Unified Ideographs, Extension A and the compatibility block: every module that asks "is this Chinese?"
(the keyword tokenizer, query key forms, evidence, token estimates, charset detection, graph names) uses these,
so they cannot disagree about a character.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

HAN_RANGES = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # the body of a character class: f"[{HAN_RANGES}]"
HAN_CHAR = re.compile(f"[{HAN_RANGES}]")
HAN_RUN = re.compile(f"[{HAN_RANGES}]+")


def is_han(char: str) -> bool:
    return HAN_CHAR.fullmatch(char) is not None


_CONVERTER_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _traditional_to_simplified() -> Any:
    import opencc  # ~16 ms, on the first Chinese text only

    return opencc.OpenCC("t2s")


@lru_cache(maxsize=65536)
def simplified(text: str) -> str:
    """``text`` with Traditional characters read as Simplified (我對什麼過敏 -> 我对什么过敏), for matching words only:
    a memory is stored and shown as written. Without it "我對什麼水果過敏？" shared no word with "我对芒果过敏"
    and every word list (relatives, categories, time words such as 上週) missed Traditional text."""
    if not HAN_CHAR.search(text):
        return text
    with _CONVERTER_LOCK:  # one converter, used from the reader threads of a server
        return str(_traditional_to_simplified().convert(text))
