"""The code points memstrata reads as Chinese characters (Han), defined once.

CJK Unified Ideographs, Extension A and the compatibility block: every module that asks "is this Chinese?"
(the keyword tokenizer, query key forms, evidence, token estimates, charset detection, graph names) uses these,
so they cannot disagree about a character.
"""

from __future__ import annotations

import re

HAN_RANGES = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # the body of a character class: f"[{HAN_RANGES}]"
HAN_CHAR = re.compile(f"[{HAN_RANGES}]")
HAN_RUN = re.compile(f"[{HAN_RANGES}]+")


def is_han(char: str) -> bool:
    return HAN_CHAR.fullmatch(char) is not None
