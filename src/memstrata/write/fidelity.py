"""Words a model changed: a name (a noun of a fact that its turn does not hold, shaped like one the turn does), or a
plan written as a wish.

The bundled 1.5B model, given "团子上周去世了" (团子: the user's cat), wrote "用户的团队上周去世了" (团队: a team),
and the wrong fact was stored with confidence 0.9. A Chinese noun of a fact that uses a character its turn
never uses, and differs from a noun of the turn of the same length in some characters only (团队 / 团子), is
read as a name the model altered: extraction asks once more, and a fact that still alters one waits for review
as pending.
Paraphrase stays free: a synonym (老婆 -> 妻子) shares no character in place, and verbs are not checked.

The same model wrote "我下个月要去东京出差" as "用户下个月想去东京出差": a trip the user will make became one they
would like to make. A fact saying the user wants something where the turn says no wish at all
(:func:`invented_wishes`) is asked about and held back the same way.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memstrata.han import HAN_RUN
from memstrata.lexical import jieba
from memstrata.patterns import lazy_pattern
from memstrata.read.names import doubled_names
from memstrata.write.decide import relation_words, subject_of

_FRAMING = frozenset({"用户"})  # the word extraction uses for the speaker


@lru_cache(maxsize=4096)
def _nouns(text: str) -> frozenset[str]:
    return frozenset(
        word
        for run in HAN_RUN.findall(text)
        for word, tag in jieba().tag(run)
        if tag.startswith("n") and len(word) >= 2 and word not in _FRAMING
    )


def _resembles(word: str, other: str) -> bool:
    same_place = sum(1 for mine, theirs in zip(word, other, strict=True) if mine == theirs)
    return 0 < same_place < len(word)


def altered_names(fact: str, source: str) -> list[str]:
    """Nouns of ``fact`` with a character its ``source`` turn never uses, each resembling a noun the turn does
    hold (same length, some characters in place): 团队 for 团子, not 哥哥 for 我哥."""
    said = _nouns(source)
    return sorted(
        word
        for word in _nouns(fact)
        if any(character not in source for character in word)
        and any(len(noun) == len(word) and _resembles(word, noun) for noun in said)
    )


# A wish in a fact ("想" but not 想到 / 想起 / 想法, "wants to", "would like to"), and any word by which a turn says one
_FACT_WISH = lazy_pattern(
    r"想(?!到|起|法|念|象|像)|\b(?:wants?|wanted|would\s+like|wish(?:es)?|hopes?)\s+to\b", re.IGNORECASE
)
_SAID_WISH = lazy_pattern(
    r"想|希望|愿|盼|渴望|\b(?:wants?|wanted|wanna|would\s+like|'d\s+(?:like|love)|love\s+to|wish|hope|dream|keen|eager"
    r"|thinking\s+(?:of|about)|considering)\b",
    re.IGNORECASE,
)


def invented_wishes(fact: str, source: str) -> list[str]:
    """The wish words of ``fact`` where its ``source`` turn says no wish at all: a plan or a fact made a wish."""
    if _SAID_WISH.search(source):
        return []
    return sorted({found.group(0) for found in _FACT_WISH.finditer(fact)})


# A relation the model gave someone the turns name only by name: of "西安去不成了，小宇学校国庆要补课。" (小宇: the son,
# named as such in an earlier session) the bundled model wrote "用户的妹妹小宇学校国庆要补课" (a user trial). A
# Chinese fact that gives the one it names a relation no turn of its call says, in full or short (我妹), is asked
# about and held back the same way.
_ZH_RELATIVE_NAMED = lazy_pattern(r"^用户的?(?P<relation>[\u4e00-\u9fff]{2,3}?)(?P<rest>[\u4e00-\u9fff]{2}.*)")
# Family only: a boss or a doctor is often named by a title the model may read right (张总, 王医生). With the other
# words a turn may say a relative by: 我妹, 爱人, 闺女 …
_FAMILY_ALSO_SAID = {
    "sister": ("妹", "姐"), "brother": ("哥", "弟"), "parent": ("妈", "爸", "父母"),
    "spouse": ("爱人", "媳妇", "先生", "对象", "另一半", "伴侣"), "partner": ("男友", "女友", "对象", "另一半"),
    "child": ("闺女", "娃", "宝宝", "小孩"),
}  # fmt: skip


def _name_opening(text: str) -> str | None:
    """The name ``text`` opens with: a word the segmenter tags as a person's name (小宇, 周明), or a doubled pet name
    (豆豆); not a verb ("用户的妈妈不吃鸡蛋" names no one)."""
    doubled = doubled_names(text[:2])
    if doubled:
        return doubled[0]
    words = jieba().tag(text[:8])
    return words[0][0] if words and words[0][1] == "nr" and len(words[0][0]) >= 2 else None


def invented_relations(fact: str, said: str) -> list[str]:
    """The relation word of a Chinese ``fact`` about someone it names ("用户的妹妹小宇…") where ``said`` (the turns of
    the call) names them but says no word of that relation; else []."""
    subject = subject_of(fact)
    found = _ZH_RELATIVE_NAMED.match(fact)
    if (
        not subject.startswith("rel:")
        or found is None
        or found.group("relation") not in relation_words(subject.removeprefix("rel:"))
    ):
        return []
    relation = subject.removeprefix("rel:")
    name = _name_opening(found.group("rest"))
    if relation not in _FAMILY_ALSO_SAID or name is None or name not in said:
        return []
    if any(word in said for word in (*relation_words(relation), *_FAMILY_ALSO_SAID[relation])):
        return []
    return [found.group("relation")]
