"""The code points memstrata reads as Chinese characters (Han), defined once.

CJK Unified Ideographs, Extension A and the compatibility block: every module that asks "is this Chinese?"
(the keyword tokenizer, query key forms, evidence, token estimates, charset detection, graph names) uses these,
so they cannot disagree about a character.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from memstrata.patterns import lazy_pattern

HAN_RANGES = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # the body of a character class: f"[{HAN_RANGES}]"
HAN_CHAR = lazy_pattern(f"[{HAN_RANGES}]")
HAN_RUN = lazy_pattern(f"[{HAN_RANGES}]+")


def is_han(char: str) -> bool:
    return HAN_CHAR.fullmatch(char) is not None


_LATIN_WORD = lazy_pattern(r"[A-Za-z]+")
# Characters by which Chinese is spoken, not only named: a pronoun or a particle ("我住在深圳, and I work at DJI"
# speaks Chinese; "My sister's clinic is called 微笑正畸 in 成都" only names in it). Not 都, 会, 和: 成都, 会展, 和平.
_SPOKEN_HAN = frozenset("我你他她们的了在是也很就要吗呢吧")


def speaks_chinese(text: str) -> bool:
    """A pronoun or particle in Chinese: Chinese is spoken in ``text``, not only names written in it."""
    return any(character in _SPOKEN_HAN for character in HAN_CHAR.findall(text))


def mostly_chinese(text: str) -> bool:
    """At least twice as many Chinese characters as words in Latin letters."""
    return len(HAN_CHAR.findall(text)) >= 2 * max(1, len(_LATIN_WORD.findall(text)))


def writes_chinese(text: str) -> bool:
    """Written in Chinese, beyond names in Chinese characters: "I moved from 北京 to 上海" is English, and its facts
    are English (asked as Chinese, the bundled model wrote them in Chinese, and they waited for review as
    translations: a user trial)."""
    return HAN_CHAR.search(text) is not None and (speaks_chinese(text) or mostly_chinese(text))


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
