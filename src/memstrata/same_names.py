"""Things one names by another word in each language: a medicine, a breed, a car brand.

"How much metformin do I take?" of a user who said "二甲双胍": the two share no character, and the bundled embedder
puts "metformin" nearer to 阿司匹林 (0.49) than to 二甲双胍 (0.33). Only the instances the categories list in both
languages are paired here (categories.py); a name with no pair is asked as its category instead (read/instances.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

# (English names, Chinese names), each side's names split by "|"; the first of each is the one added to a question.
# An English name matches with an "s" after it too ("corgis").
_PAIRS = (
    # medicines
    ("metformin", "二甲双胍"),
    ("amlodipine", "氨氯地平"),
    ("insulin", "胰岛素"),
    ("aspirin", "阿司匹林"),
    ("ibuprofen", "布洛芬"),
    ("paracetamol|acetaminophen", "对乙酰氨基酚"),
    ("amoxicillin", "阿莫西林"),
    ("omeprazole", "奥美拉唑"),
    ("levothyroxine", "左甲状腺素|优甲乐"),
    ("melatonin", "褪黑素"),
    ("statin|atorvastatin|simvastatin", "他汀"),
    # pets by kind or breed
    ("golden retriever", "金毛"),
    ("corgi", "柯基"),
    ("husky|huskies", "哈士奇"),
    ("labrador", "拉布拉多"),
    ("border collie", "边牧"),
    ("samoyed", "萨摩耶"),
    ("shiba", "柴犬"),
    ("pomeranian", "博美"),
    ("schnauzer", "雪纳瑞"),
    ("ragdoll", "布偶猫"),
    ("british shorthair", "英短"),
    ("siamese", "暹罗猫"),
    ("hamster", "仓鼠"),
    ("parrot", "鹦鹉"),
    ("goldfish", "金鱼"),
    ("turtle|tortoise", "乌龟"),
    # car brands
    ("tesla", "特斯拉"),
    ("bmw", "宝马"),
    ("audi", "奥迪"),
    ("toyota", "丰田"),
    ("honda", "本田"),
    ("mercedes|benz", "奔驰"),
    ("byd", "比亚迪"),
    ("porsche", "保时捷"),
    ("nissan", "日产"),
)


def _english(names: str) -> re.Pattern[str]:
    alternatives = (re.escape(name).replace(r"\ ", r"\s+") + "s?" for name in names.split("|"))
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


Pair = tuple[re.Pattern[str], re.Pattern[str], str, str]


@lru_cache(maxsize=1)
def _patterns() -> tuple[Pair, ...]:
    return tuple(
        (_english(english), re.compile(chinese), english.split("|")[0], chinese.split("|")[0])
        for english, chinese in _PAIRS
    )


@lru_cache(maxsize=1)
def _any_name() -> re.Pattern[str]:
    """Any paired name, in either language: most questions name none, and one search tells."""
    english = "|".join(english for english, _ in _PAIRS)
    chinese = "|".join(chinese for _, chinese in _PAIRS)
    return re.compile(_english(english).pattern + "|" + chinese, re.IGNORECASE)


def names_in_other_language(text: str) -> str:
    """The other language's name of each paired thing ``text`` names in one language only, or ""."""
    if not _any_name().search(text):
        return ""
    return in_the_other_language(_patterns(), text)


def in_the_other_language(pairs: Iterable[Pair], text: str) -> str:
    """For each pair of (English pattern, Chinese pattern, English words, Chinese words) whose thing ``text`` names in
    one language only, the other language's words; or "". Relatives are paired this way too (categories.py)."""
    words = []
    for english, chinese, english_words, chinese_words in pairs:
        said_english, said_chinese = english.search(text) is not None, chinese.search(text) is not None
        if said_english != said_chinese:
            words.append(chinese_words if said_english else english_words)
    return " ".join(words)


def has_a_pair(instance: str) -> bool:
    """Whether ``instance`` (a name the categories list) is one of the paired names."""
    return any(english.fullmatch(instance) or chinese.fullmatch(instance) for english, chinese, *_ in _patterns())
