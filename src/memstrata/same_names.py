"""Things and people one names by another word in each language: a medicine, a breed, a car brand, a relative.

"How much metformin do I take?" of a user who said "二甲双胍": the two share no character, and the bundled embedder
puts "metformin" nearer to 阿司匹林 (0.49) than to 二甲双胍 (0.33). Only the instances the categories list in both
languages are paired here (categories.py); a name with no pair is asked as its category instead (read/instances.py).
CC-CEDICT (glossary.py) knows few of these names: none of the medicines but insulin and aspirin, few of the breeds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from memstrata.patterns import lazy_pattern

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


def whole_words(words: str) -> str:
    """Whole English words (space-separated regexes) as one alternative."""
    return r"\b(?:" + "|".join(words.split()) + r")\b"


# Family and partners by their words in the other language, for text that mixes the two: "Where does my cousin
# study?" and "My 表弟 Jason 在 Toronto 读 CS master" share no word, and the bundled embedder reads mixed text poorly
# (cosine 0.08; a text in one language it reads across languages well enough). Added to every text that names a
# relative, they cost MADial en 0.766 -> 0.752 (same-language synonyms, "mom" with "mother", did more harm still).
_PARTNERS = (
    (r"girlfriends?", "女朋友|女友", "girlfriend", "女朋友 女友"),
    (r"boyfriends?", "男朋友|男友", "boyfriend", "男朋友 男友"),
    (r"wife", "老婆|妻子|太太|媳妇", "wife", "老婆 妻子 太太"),
    (r"husband", "老公|丈夫", "husband", "老公 丈夫"),
)
RELATIONS = tuple(
    (lazy_pattern(whole_words(english), re.IGNORECASE), lazy_pattern(chinese), english_words, chinese_words)
    for english, chinese, english_words, chinese_words in (
        *_PARTNERS,
        (r"mom mum mother", "妈妈|母亲|老妈", "mom mother", "妈妈 母亲"),
        (r"dad father", "爸爸|父亲|老爸", "dad father", "爸爸 父亲"),
        (r"sisters?", "姐姐|妹妹", "sister", "姐姐 妹妹"),
        (r"brothers?", "哥哥|弟弟", "brother", "哥哥 弟弟"),
        (r"cousins?", "[表堂][哥姐弟妹]", "cousin", "表哥 表姐 表弟 表妹 堂哥 堂姐 堂弟 堂妹"),
        (r"daughters?", "女儿", "daughter", "女儿"),
        (r"sons?", "儿子", "son", "儿子"),
        (r"grandma grandmother", "奶奶|外婆|姥姥", "grandma grandmother", "奶奶 外婆 姥姥"),
        (r"grandpa grandfather", "爷爷|外公|姥爷", "grandpa grandfather", "爷爷 外公 姥爷"),
    )
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


@lru_cache(maxsize=65_536)
def relatives_in_other_script(text: str, *, partners_only: bool = False) -> str:
    """The words of each relative ``text`` names in one script only, in the other one ("boyfriend": "男朋友 男友");
    or "". ``partners_only``: of a partner alone (girlfriend, boyfriend, wife, husband)."""
    return in_the_other_language(RELATIONS[: len(_PARTNERS)] if partners_only else RELATIONS, text)
