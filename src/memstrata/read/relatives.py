"""The names of the relatives a question asks about by relation: "What does my sister do?" also asks about Emma,
when a memory of the scope says "My sister Emma is a doctor".

People name a relative once and then use the name: "Correction: Emma isn't a doctor, she's a nurse" shares no word
with the question, and meaning alone ranked it under the cutoff, so the outdated "doctor" answered. Found by a
keyword search for the relation's words in both languages ("sister 姐姐 妹妹"), the names are searched beside the
question's own words, and the later correction can answer (read/newer.py). Only family (a partner as a spouse) and
pets, whom one has few of and keeps: a friend, a colleague, a boss or a girlfriend named once may not be the one
asked about now ("Who is my girlfriend?" after "Anna and I broke up" and a new one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from memstrata.lexical import jieba, search_terms
from memstrata.patterns import lazy_pattern
from memstrata.query import SearchQuery
from memstrata.read.names import doubled_names
from memstrata.read.rank import MemoryText
from memstrata.storage.protocol import Store

# (English words, Chinese words) per relation.
_RELATIONS = (
    ("sister", "姐姐|妹妹"),
    ("brother", "哥哥|弟弟"),
    ("wife", "太太|妻子|老婆|夫人|媳妇"),
    ("husband", "丈夫|老公"),
    ("partner", "伴侣|另一半"),  # one kept as a wife or husband is ("My partner 林晓 is vegetarian": a user trial)
    ("mother|mom|mum", "母亲|妈妈|老妈"),
    ("father|dad", "父亲|爸爸|老爸"),
    ("daughter", "女儿"),
    ("son", "儿子"),
    ("grandmother|grandma", "奶奶|外婆|姥姥"),
    ("grandfather|grandpa", "爷爷|外公|姥爷"),
    ("cat|kitten", "猫|猫咪"),  # a pet is named once and then called by its name too ("Mochi 其实是 female")
    ("dog|puppy", "狗|狗狗"),
)
# The one-character forms people say after 我 ("我妹去成都了", "我哥在华为"); not 我姐夫, 我哥们 (someone else).
_SHORT = ("姐|妹", "哥|弟", "", "", "", "妈", "爸", "", "", "", "", "", "")
_MINE = r"(?:\b(?:my|our|user's|the user's)\s+)"
# "我们女儿朵朵今年五岁" names our daughter as "我女儿" does (a user trial)
_MINE_ZH = r"(?:我|我家|我们家|我们|用户)的?"
_ASKED = [
    lazy_pattern(
        rf"{_MINE}(?:{english})(?:s|['’]s)?\b|{_MINE_ZH}(?:{chinese})"
        + (rf"|我(?:{short})(?![夫们])" if short else ""),
        re.IGNORECASE,
    )
    for (english, chinese), short in zip(_RELATIONS, _SHORT, strict=True)
]
# A memory that says the relation, in either language or the short form: it is about that relative.
_SAID = [
    lazy_pattern(
        rf"\b(?:{english})(?:s|['’]s)?\b|{chinese}" + (rf"|我(?:{short})(?![夫们])" if short else ""), re.IGNORECASE
    )
    for (english, chinese), short in zip(_RELATIONS, _SHORT, strict=True)
]
_EN_NAME = r"(?-i:(?P<name>[A-Z][a-z]{1,20}))\b"
_ZH_NAMING = r"(?:叫做|名叫|叫|名字是|名字叫)?"
_NAMED = [
    (
        lazy_pattern(rf"{_MINE}(?:{english})(?:['’]s name is|\s+is\s+(?:called|named)|,)?\s+{_EN_NAME}", re.I),
        # "My wife is Anna." names her where the name ends the clause ("My wife is Anna and …" too), not "My wife is
        # Anna's friend"; a nationality or faith is no name (``_NOT_NAMES``)
        lazy_pattern(rf"{_MINE}(?:{english})\s+is\s+{_EN_NAME}(?=\s*(?:[.,!?;:)]|$)|\s+and\b)", re.I),
        lazy_pattern(rf"{_EN_NAME},?\s+{_MINE}(?:{english})\b", re.I),
        # 是 names no one by itself ("我老婆是老师"): after it only a word tagged as a person's name counts ("是李娜")
        lazy_pattern(rf"{_MINE_ZH}(?:{chinese})是?(?P<naming>{_ZH_NAMING})\s*(?P<rest>[\w\u4e00-\u9fff]{{1,8}})"),
        # a Chinese name in an English sentence: "My partner 林晓 is vegetarian" (a user trial)
        lazy_pattern(rf"{_MINE}(?:{english})\s*(?P<naming>)(?P<rest>[\u4e00-\u9fff]{{2,3}})(?=[\s,.!?;:'’)]|$)", re.I),
        # named a little later: "Adopted a male cat from SPCA，叫 Mochi", "a greyhound puppy named Biscuit"
        lazy_pattern(
            rf"(?:\b(?:{english})\b|{chinese})[^.!?。！？]{{0,20}}?(?P<naming>named|名叫|叫)\s*"
            r"(?P<rest>[\w\u4e00-\u9fff]{1,8})",
            re.I,
        ),
    )
    for english, chinese in _RELATIONS
]
_NOT_NAMES = frozenset(
    {"I", "And", "But", "The", "Is", "Was", "Has", "Had", "He", "She", "They", "We", "It"}
    | {"Chinese", "American", "British", "English", "French", "German", "Japanese", "Korean", "Indian", "Canadian"}
    | {"Australian", "Italian", "Spanish", "Mexican", "Russian", "Brazilian", "Irish", "Dutch", "Swedish", "Thai"}
    | {"Vietnamese", "Filipino", "Asian", "European", "African", "Christian", "Catholic", "Muslim", "Jewish"}
    | {"Buddhist", "Hindu", "Vegan", "Vegetarian", "Pregnant", "Retired", "Fine", "Okay", "OK", "Home", "Here"}
)
_SEARCHED = 30  # memories read for names: a few relatives' introductions among what mentions the relation


def asked_relations(text: str) -> list[int]:
    """Indexes (into the relation table) of the relatives ``text`` names by relation to its speaker."""
    return [index for index, pattern in enumerate(_ASKED) if pattern.search(text)]


def names_given(text: str, relations: Iterable[int]) -> list[str]:
    """The names ``text`` gives relatives of those relations: "My sister Emma", "My sister is Emma.", "Emma, my
    sister", "我妹妹叫小雨", "我妹妹林小雨在腾讯工作"."""
    names: list[str | None] = []
    for index in relations:
        english, plainly, named_after, *chinese_or_later = _NAMED[index]
        names += [
            found.group("name") for pattern in (english, plainly, named_after) for found in pattern.finditer(text)
        ]
        names += [
            _chinese_name(found.group("rest"), bool(found.group("naming")))
            for pattern in chinese_or_later
            for found in pattern.finditer(text)
        ]
    return list(dict.fromkeys(name for name in names if name and name not in _NOT_NAMES))


def _chinese_name(rest: str, named_so: bool) -> str | None:
    """The name right after the relation: any first word after 叫 ("我妹妹叫小美"), else a word the segmenter tags
    as a person's name, a lone surname joined to it ("林" + "小雨")."""
    words: list[tuple[str, str]] = jieba().tag(rest)
    if not words:
        return None
    first, tag = words[0]
    if re.fullmatch(r"[A-Z][a-z]{1,20}", first):  # "我妹妹Emma在上海"
        return first
    if len(words) > 1 and len(first) == 1 and words[1][1] == "nr":  # 林 + 小雨, after 叫 too ("我老婆叫林小雨")
        return first + words[1][0]
    if named_so:
        return first if 1 < len(first) <= 4 else None
    if doubled_names(rest[:2]):  # "我女儿朵朵今年6岁" (a user trial)
        return rest[:2]
    return first if tag == "nr" and len(first) >= 2 else None


@dataclass(frozen=True)
class Relatives:
    """The relatives a question asks about by relation, by the names the scope's memories give them."""

    names: tuple[str, ...]
    words: str  # the relation's words in both languages: "sister 姐姐 妹妹"
    relations: tuple[int, ...] = ()  # indexes into the relation table

    def searched(self, topic: str) -> str:
        """What keyword and dense search look for: the question and the names (the question alone without any)."""
        return f"{topic} {' '.join(self.names)}" if self.names else topic

    def read(self, text: MemoryText) -> MemoryText:
        """A memory naming one of them also says the relation: "Correction: Emma isn't a doctor" is about the
        sister, and matches "What does my sister do?" on the same word as "My sister Emma is a doctor" does (so the
        later one answers: read/newer.py), and "我妹妹是做什么的？" across scripts."""
        own = text.indexed if text.own_indexed is None else text.own_indexed
        # "我妹去成都了，现在是正畸医生" says the sister in none of the words of "What does my sister do?" (19th, at
        # relevance 0, under the job she left): the relation said in the other language or short form counts too
        relation_said = any(_SAID[index].search(own) for index in self.relations)
        if not (relation_said or any(_names(name, own) for name in self.names)):
            return text  # a reply carrying the turn that names her is not about her (its own words are not)
        own_indexed = None if text.own_indexed is None else f"{text.own_indexed}\n{self.words}"
        # The relation's words are the memory's own, in both languages (as a category's are): "我弟弟林浩…" matched
        # "What's my brother's name?" on "brother", yet stood across scripts on its meaning alone (0.07).
        said = text.own if text.said is None else text.said
        return replace(text, indexed=f"{text.indexed}\n{self.words}", own_indexed=own_indexed,
                       own=f"{text.own}\n{self.words}", said=said)  # fmt: skip


def relatives_asked(store: Store, query: SearchQuery, topic: str) -> Relatives | None:
    """The relatives ``topic`` asks about by relation and the names the scope's memories give them (maybe none: a
    memory that says the relation is still read as about them, see :meth:`Relatives.read`); None when it asks of no
    relative."""
    relations = asked_relations(topic)
    if not relations:
        return None
    words = " ".join(word for i in relations for part in _RELATIONS[i] for word in part.split("|"))
    found = store.keyword_search(query.scope, search_terms(words), query.filters, _SEARCHED)
    items = store.get(query.scope, [hit.memory_id for hit in found])
    names = tuple(dict.fromkeys(name for item in items for name in names_given(item.text, relations)))
    return Relatives(names, words, tuple(relations))


def _names(name: str, text: str) -> bool:
    if name.isascii():
        return re.search(rf"\b{re.escape(name)}\b", text) is not None
    return name in text
