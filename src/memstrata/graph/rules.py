"""Relation triples without a model: clause patterns for Chinese and English, jieba part-of-speech tags for
types. The offline fallback, honest about its limits.

It sees explicit statements of a small set of relations (spouse and family, likes, depends on, responsible
for, lives in / moved to, works at / joined, profession, keeps a pet) in one clause, with the subject said or carried
over from the previous clause of the same turn. It does not resolve pronouns beyond "我"/"I", understands
no paraphrase and no nesting, and misses any relation it has no pattern for: a model does that far better.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import cache

from memstrata.graph.extracted import Mention, Triple
from memstrata.graph.names import USER_NAME, clean_name, is_user, type_from_name
from memstrata.graph.vocabulary import EN_FAMILY, END_TYPES, FAMILY, SHORT_KIN
from memstrata.modality import NOT_YET
from memstrata.patterns import lazy_pattern
from memstrata.types import Message

# A second verb after "and" ("I live in Beijing and work at Baidu") starts a clause of the same subject.
_SECOND_VERB = (r"(?:now |also |then |currently )?(?:works?|worked|lives?|lived|moved|stud(?:y|ies)|joined|likes?|"
                r"loves?|prefers?|hates?)\b")  # fmt: skip
_CLAUSE = lazy_pattern(
    rf"[，,。！？!?；;：:\n]+|(?<=[a-z])\.\s+|\s+(?:and|but|so)\s+(?=I\b)|\s+and\s+(?={_SECOND_VERB})"
)
_SUBJECTLESS = lazy_pattern(rf"^(?:and\s+)?(?={_SECOND_VERB})")
_QUESTION = lazy_pattern(
    r"[?？]|吗$|什么|谁|哪|怎么|多少|^(do|does|did|can|could|would|what|why|how|where|when|who)\b", re.I
)

_ZH_NAME = r"[\w\u4e00-\u9fff·\- ]"
_EN_KIN = "|".join(EN_FAMILY.values())
_ZH_KIN = "|".join(FAMILY.values())
# "My sister Lily" is a subject too: the relative named (see _kin_named)
_EN_NAME = r"[A-Z][\w.'\-]*(?: [A-Z][\w.'\-]*)?"
_EN_SUBJECT = (rf"(?P<s>I|[Mm]y (?:{_EN_KIN}) {_EN_NAME}|[A-Z][\w.'\-]*(?: [A-Z][\w.'\-]*){{0,3}}"
               r"|[Tt]he [\w ]{1,30}?)")  # fmt: skip
_KIN_NAMED = [
    (rel, lazy_pattern(rf"^(?:[Mm]y (?:{en}) (?P<en>{_EN_NAME})|我的?(?:{zh})(?P<zh>[\u4e00-\u9fff·]{{2,4}}))$"))
    for (rel, zh), en in zip(FAMILY.items(), EN_FAMILY.values(), strict=True)
]
_ADVERB = r"(?:现在|目前|还|也|都|一直|已经|仍然|最近|很|最|特别|非常|比较|真的)*"
_MEASURE = r"(?:[一两三四五几]?[只条匹头个])?"  # "一只" in "养了一只布偶猫"


def _zh(verbs: str, *, tail: str = "$") -> re.Pattern[str]:
    """subject (optional, short) + adverbs + verb + object; the object is lazy when a tail must follow."""
    lazy = "?" if tail != "$" else ""
    return lazy_pattern(rf"^(?P<s>.{{0,12}}?){_ADVERB}(?:{verbs})(?P<o>.{{1,20}}{lazy}){tail}")


def _en(verbs: str) -> re.Pattern[str]:
    return lazy_pattern(rf"^{_EN_SUBJECT} (?:really |also |still |now )?(?:{verbs}) (?P<o>.+)$")


# (relation, ended, pattern with groups s (may be empty) and o). The first pattern that matches decides.
_ZH: list[tuple[str, bool, re.Pattern[str]]] = [
    *[
        (rel, False, lazy_pattern(rf"^(?P<s>{_ZH_NAME}{{1,12}}?)的(?:{words})(?:是|叫)(?P<o>{_ZH_NAME}{{1,12}})$"))
        for rel, words in FAMILY.items()
    ],
    *[
        (rel, False, lazy_pattern(rf"^(?P<o>{_ZH_NAME}{{1,12}}?)是(?P<s>{_ZH_NAME}{{1,12}}?)的(?:{words})$"))
        for rel, words in FAMILY.items()
    ],
    *[  # the speaker's own, without 的: "我妹妹叫林小雨", "我老板是王总"
        (rel, False, lazy_pattern(rf"^(?P<s>我)(?:{words})(?:是|叫|名叫|叫做)(?P<o>{_ZH_NAME}{{1,12}})$"))
        for rel, words in FAMILY.items()
    ],
    ("dislikes", False, _zh("不再喜欢|不再爱|不喜欢|不爱|讨厌|受不了")),
    ("likes", False, _zh("喜欢|爱喝|爱吃|爱看|爱|偏爱|钟爱")),
    ("depends_on", False, lazy_pattern(r"^(?P<s>.{1,16}?)(?:依赖于?|取决于|要等|需要等)(?P<o>.{1,20})$")),
    # "小雨养了一只布偶猫": the pet without its measure word
    # "领养" whole: "我们又领养了一只狗" read 养了 alone and made a person of "我们又领" (a user trial)
    ("has_pet", False, _zh(f"(?:领养了|领养|收养了|收养|养了|养着|养){_MEASURE}")),
    ("responsible_for", False, _zh("负责|主管|主导|维护|管")),
    ("lives_in", True, _zh("不住在|搬离|离开了?", tail="(?:了)?$")),
    ("lives_in", False, _zh("住在|住|定居在?|搬到|搬去|搬回|搬家到")),
    ("works_at", True, _zh("从|不在", tail="(?:离职|辞职|工作)了?$")),
    ("lives_in", False, _zh("在|于", tail="(?:生活|居住|定居)")),
    ("works_at", False, _zh("在|于", tail="(?:工作|上班|任职|实习|做|当)")),
    ("works_at", False, _zh("加入了?|入职了?|跳槽到")),
    (
        "has_profession",
        False,
        lazy_pattern(
            rf"^(?P<s>.{{0,12}}?){_ADVERB}是(?:一名|一个|个|名)?"
            r"(?P<o>.{0,8}(?:工程师|经理|医生|老师|教授|设计师|律师|程序员|研究员|学生|作家|记者|会计|护士))$"
        ),
    ),
]

_EN: list[tuple[str, bool, re.Pattern[str]]] = [
    *[
        (rel, False, lazy_pattern(rf"^{_EN_SUBJECT}'s (?:{words}) is (?P<o>.{{1,40}})$"))
        for rel, words in EN_FAMILY.items()
    ],
    *[
        (rel, False, lazy_pattern(rf"^(?P<o>[A-Z][\w.'\- ]{{0,40}}?) is (?P<s>[A-Z][\w.'\- ]{{0,40}}?)'s (?:{words})$"))
        for rel, words in EN_FAMILY.items()
    ],
    *[
        (rel, False, lazy_pattern(rf"^[Mm]y (?:{words})(?:'s name)? is (?:called |named )?(?P<o>.{{1,40}})$"))
        for rel, words in EN_FAMILY.items()
    ],
    # "Tom is married to Anna" made no edge (a user trial); "Tom divorced Anna" ends it
    ("spouse_of", True, _en("divorced|(?:is|am|are|got) divorced from|split up with")),
    ("spouse_of", False, _en("(?:is|am|are|got) married to|married")),
    ("dislikes", False, _en("hates?|dislikes?|(?:do|does)n't like")),
    ("likes", False, _en("likes?|loves?|enjoys?|prefers?")),
    ("depends_on", False, _en("depends? on|relies on|rely on")),
    (
        "responsible_for",
        False,
        lazy_pattern(
            rf"^{_EN_SUBJECT} (?:is|am) (?:responsible for|in charge of) (?P<o>.+)$|"
            rf"^{_EN_SUBJECT.replace('?P<s>', '?P<s2>')} (?:owns|maintains|leads) (?P<o2>.+)$"
        ),
    ),
    ("lives_in", True, _en("moved out of|no longer lives? in|left")),
    ("lives_in", False, _en("lives? in|moved to|relocated to")),
    ("works_at", True, _en("quit|left|no longer works? (?:at|for)")),
    ("works_at", False, _en("works? (?:at|for)|(?:am|is|are) (?:now )?working (?:at|for)|joined")),
]

_TRAILING = lazy_pattern(r"[了啦呢吧哦啊呀的嘛\s.!]+$")
_LEADING = lazy_pattern(r"^(?:(?:而且|并且|然后|但是|不过|另外|其实|所以|因为)|(?:and|but|so|also|the|a|an)\s+)", re.I)
_PRONOUNS = {"你", "他", "她", "它", "你们", "他们", "它们", "这", "那", "这个", "那个", "you", "it", "that", "this"}


# An English object ends where a phrase about something else begins (the pattern takes the rest of the clause):
# "New York with my wife", "Berlin since 2020", "tennis on weekends"; "Beijing and work at Baidu" (a second
# verb: "Johnson and Johnson" stays whole).
# Time adverbs end it too ("New York City now", "Google these days", "深圳 since 2020": a Chinese name followed
# by English words is cut the same way).
_EN_OBJECT_END = lazy_pattern(
    r"\s+(?:(?i:with|since|because|when|while|after|before|until|as|last|next|every|on|at|in|from|for|now|"
    r"currently|nowadays|today|these days|recently|lately|anymore|again|too|as well)\b"
    r"|and\s+(?=[a-z])).*$"
)


def _clean(name: str) -> str:
    name = _TRAILING.sub("", _LEADING.sub("", name.strip())).strip()
    if (name[:1].isascii() and name[:1].isalpha()) or re.search(r"\s[A-Za-z]", name):
        name = _EN_OBJECT_END.sub("", name).strip()
    return name


# A Chinese clause often opens with its time and leaves the speaker out ("上周搬到上海了"), and an adverb sits before
# the verb ("现在我们只养狗"): the time and the adverb are no part of who did it. Read as the subject, "上周" lived in
# 上海 and "现在我们只" kept a dog (found with an imported history).
_ZH_TIME_LEAD = lazy_pattern(
    r"^(?:(?:上+|下+|这|本)个?(?:周|星期|礼拜|月)[一二三四五六日天末]?|[昨今明前后]天|[去今明前]年|最近|现在|目前|刚才|刚刚"
    r"|后来|之前|以前|当时|那时|周[一二三四五六日末]|星期[一二三四五六日天]|[\d一二三四五六七八九十两]+(?:年|月|号|日|点)"
    r"|早上|上午|中午|下午|晚上|[，,\s])+"
)
_ZH_ADVERB_TAIL = lazy_pattern(r"(?:只|也|还|都|就|又|才|已经|一直|终于)+$")


def _subject(name: str) -> str:
    """The subject of a clause without the time it opens with or an adverb before its verb; "" (the speaker) when
    nothing else is left."""
    return _clean(_ZH_ADVERB_TAIL.sub("", _ZH_TIME_LEAD.sub("", name.strip())))


def _usable(name: str) -> bool:
    return 0 < len(name) <= 24 and name.lower() not in _PRONOUNS and not _QUESTION.search(name)


@cache
def _posseg() -> object:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.ERROR)  # it prints dictionary loading to stderr
    return jieba.posseg


_POS_TYPES = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "location", "nt": "organization"}


def pos_type(name: str) -> str | None:
    """jieba's part-of-speech tag when the whole name is one word tagged person / place / organisation."""
    words = list(_posseg().cut(name))  # type: ignore[attr-defined]
    if len(words) == 1:
        return _POS_TYPES.get(words[0].flag)
    return None


def mention(name: str, speaker: str | None = None) -> Mention:
    """ "我" / "I" is the speaker when the turn names one (group chats, transcripts), else the user."""
    if is_user(name):
        return Mention(speaker or USER_NAME, "person", speaker=True)
    name = clean_name(name)
    return Mention(name, type_from_name(name) or pos_type(name))


class RulesGraphExtractor:
    name = "rules"

    def extract(self, turns: Sequence[Message]) -> list[Triple]:
        triples: list[Triple] = []
        for turn in turns:
            if turn.role != "user":
                continue  # what an assistant says needs judgement patterns cannot give
            speaker = turn.name or USER_NAME
            subject = speaker  # a subjectless clause is about the speaker: "搬到朝阳区了"
            said: str | None = None  # the subject the last clause was read with, for one that continues it
            named: set[tuple[str, str]] = set()  # (relation, name) of relatives this turn named
            others = False  # a clause of this turn opened with someone else ("我哥也搬家了"), not the speaker
            for clause in (part.strip() for part in _CLAUSE.split(turn.content)):
                if len(clause) < 2 or _QUESTION.search(clause):
                    continue
                if _ANOTHER_LEADS.match(clause):
                    others = True
                elif _SPEAKER_LEADS.match(clause):
                    others = False
                if NOT_YET.search(clause):  # "我可能下个月搬去深圳" is not where the speaker lives
                    said = None
                    continue
                if _SUBJECTLESS.match(clause):
                    if said is None:  # the clause before was not understood: whose verb this is is unknown
                        continue
                    clause = f"{said} {_SUBJECTLESS.sub('', clause)}"
                found = _match(clause)
                if found is None:
                    said = None
                    continue
                relation, ended, said_subject, target = found
                if not said_subject and others and subject == speaker:  # "我哥也搬家了，…，在 Zalando 做 …": his job
                    said = None
                    continue
                kin = _kin_named(said_subject)
                if kin is not None:  # "我妹妹林小雨在腾讯工作": 林小雨 works there, and she is the user's sister
                    said_subject = kin[1]
                    if kin not in named:
                        named.add(kin)
                        triples.append(Triple(mention(USER_NAME), kin[0], Mention(kin[1], "person"), 0.6, (turn.id,),
                                              origin="rules"))  # fmt: skip
                if relation == "has_pet" and _HOUSEHOLD.fullmatch(said_subject):  # the speaker's household's pet
                    said_subject = ""
                subject = said_subject or subject
                said = (said_subject or "I") if (said_subject or "I").isascii() else None
                triples.append(
                    Triple(
                        mention(subject, turn.name),
                        relation,
                        _as_target(mention(target, turn.name), relation),
                        0.6,
                        (turn.id,),
                        ended=ended,
                        origin="rules",
                    )
                )
        return triples


_HOUSEHOLD = lazy_pattern(r"我们家?|咱们家?|咱家|我家|(?i:we|our family)")


# A clause that opens with someone other than the speaker (a relative, "he" / "她"), and one that opens with the
# speaker again: a clause without a subject after the first is about that someone, whose name is not known here.
_ANOTHER_LEADS = lazy_pattern(
    rf"^(?:我(?:的|们的?|家的?)?(?:{_ZH_KIN}|{SHORT_KIN})|他|她|(?:my|our)\s+(?:\w+\s+)?(?:{_EN_KIN})s?\b"
    r"|(?:he|she|they)\b)",
    re.IGNORECASE,
)
_SPEAKER_LEADS = lazy_pattern(rf"^(?:我(?![的们家]?{SHORT_KIN})|I\b|I'm\b|we\b)", re.IGNORECASE)


def _as_target(found: Mention, relation: str) -> Mention:
    """jieba tags many company and thing names as people (阿里巴巴, 谷歌, 郁金香); where the relation takes no
    person at that end, that tag is dropped and the relation's type applies (a refused triple was lost)."""
    expected = END_TYPES.get(relation, (None, None))[1]
    named = _PET_NAMED.fullmatch(found.name) if relation == "has_pet" else None
    if named is not None:  # "猫叫团子", "狗叫 Mochi": the pet is 团子, Mochi (a user trial found "狗叫 Mochi" a node)
        return Mention(named.group(1), None)
    if found.type == "person" and expected not in (None, "person") and not found.speaker:
        return Mention(found.name, None)
    return found


_PET_NAMED = lazy_pattern(
    r"[\u4e00-\u9fff]{1,6}?(?:叫做?|名叫|名字叫)\s*([\u4e00-\u9fff]{1,4}|[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*)?)"
)


def _kin_named(subject: str) -> tuple[str, str] | None:
    """(relation, name) when the subject is a relative named by the speaker: "My sister Lily", "我妹妹林小雨"."""
    for relation, pattern in _KIN_NAMED:
        found = pattern.match(subject)
        if found is not None:
            return relation, found.group("en") or found.group("zh")
    return None


_CONTRACTED = lazy_pattern(r"^(I|[Ss]?[Hh]e|[Ww]e|[Tt]hey)'(m|s|re)\b")
_EXPANDED = {"m": "am", "s": "is", "re": "are"}


def _match(clause: str) -> tuple[str, bool, str, str] | None:
    clause = _CONTRACTED.sub(lambda m: f"{m.group(1)} {_EXPANDED[m.group(2)]}", clause)  # "I'm working at X"
    for relation, ended, pattern in (*_ZH, *_EN):
        found = pattern.search(clause)
        if found is None:
            continue
        groups = {name: value for name, value in found.groupdict().items() if value is not None}
        subject = _subject(groups.get("s") or groups.get("s2") or ("I" if clause.lower().startswith("my ") else ""))
        target = _clean(groups.get("o") or groups.get("o2") or "")
        if not _usable(target) or (subject and not _usable(subject)):
            continue
        return relation, ended, subject, target
    return None
