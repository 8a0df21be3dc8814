"""The engine decides: from a fact, its candidates and the judge's answer per pair, one checked decision.

The judge (a model or the rules) only says how the fact relates to each candidate. What is written follows
from rules a reader can check, and every answer the rules refuse is recorded as a :class:`Rejection`:

- ``same`` makes the fact a NONE pointing at that memory, if the memory is close to it (similarity) and about
  the same person; a "same" for a distant memory is refused and the fact is kept.
- ``contradicts`` closes the memory and stores the fact (UPDATE), unless the two are about different people
  ("用户喜欢猫" is not changed by "用户的妹妹喜欢狗"), one is a plan and the other not, the fact is one more of a
  kind a person holds several of (a second allergy, pet or sport: :func:`both_can_hold`), or the memory is an event
  that happened then and the fact no correction of it (:func:`past_event_stands`).
- ``refines`` closes the memory only if the fact repeats its content (the fact is the fuller version);
  otherwise both are kept.
- ``unrelated`` (both can be true) changes nothing, unless the fact is close, about the same person and repeats
  nearly everything the memory says: then it is the fuller version and replaces it ("refines").
- no answer changes nothing.
A fact never touches a memory outside its candidates: there is no way to name one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from memstrata.han import HAN_CHAR, simplified
from memstrata.modality import ENDED_WORDS, PLANNED, calls_off
from memstrata.patterns import lazy_pattern
from memstrata.prompts.compare_facts import Relation
from memstrata.read.names import doubled_names, names_in
from memstrata.topics import topics_of
from memstrata.types import MemoryItem
from memstrata.write.decisions import Add, Candidate, NewFact, Noop, Rejection, Resolved, Update
from memstrata.write.evidence import (
    MANY_VALUED,
    content_words,
    same_things,
    shared_topics,
    shared_words,
)


@dataclass(frozen=True)
class DecideRules:
    same_min_similarity: float = 0.6  # a "same" answer needs a memory at least this close
    refine_min_coverage: float = 0.5  # share of the old memory's words a "refines" answer must repeat
    # "both true" and the new fact repeats (nearly) all the old one says: the new one is the fuller version
    subsume_min_coverage: float = 0.8
    subsume_min_similarity: float = 0.55


_PUNCTUATION = lazy_pattern(r"[\s\W_]+", re.UNICODE)


def _words(text: str) -> str:
    """The text's words, case, width and punctuation aside, one space between them."""
    return " ".join(_PUNCTUATION.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


def same_text(a: str, b: str) -> bool:
    """Equal up to case, width, spacing and punctuation: "用户喜欢喝乌龙茶。" is "用户喜欢喝乌龙茶"."""
    return _words(a).replace(" ", "") == _words(b).replace(" ", "")


def content_length(text: str) -> int:
    """Characters besides spacing and punctuation: "用户是素食者。" is no fuller than "用户是素食者"."""
    return len(_PUNCTUATION.sub("", text))


def said_within(fact: str, fuller: str) -> bool:
    """``fuller`` says all of ``fact`` and more, in the same words (case, width and punctuation aside; whole words
    in Latin letters): "用户侄女小橙子下个月满一岁" within "用户侄女小橙子下个月满一岁想给她买个木头拼图", not
    "User likes tea" within "User likes teapots"."""
    short, long = _words(fact), _words(fuller)
    if not short or len(short) >= len(long):
        return False
    return re.search(rf"(?<![a-z0-9]){re.escape(short)}(?![a-z0-9])", long) is not None


# Who a fact is about: the user, or someone the user mentions by relation ("用户的妹妹", "User's sister").
_RELATIONS = {
    "妹妹": "sister", "姐姐": "sister", "sister": "sister", "哥哥": "brother", "弟弟": "brother", "brother": "brother",
    "妻子": "spouse", "太太": "spouse", "老婆": "spouse", "丈夫": "spouse", "老公": "spouse", "wife": "spouse",
    "husband": "spouse", "partner": "spouse", "女儿": "child", "儿子": "child", "孩子": "child", "daughter": "child",
    "son": "child", "kid": "child", "父亲": "parent", "母亲": "parent", "爸爸": "parent", "妈妈": "parent",
    "father": "parent", "mother": "parent", "mom": "parent", "dad": "parent", "同事": "colleague",
    "colleague": "colleague", "coworker": "colleague", "朋友": "friend", "friend": "friend", "经理": "boss",
    "老板": "boss", "领导": "boss", "上司": "boss", "manager": "boss", "boss": "boss", "室友": "roommate",
    "roommate": "roommate", "男朋友": "partner", "女朋友": "partner", "boyfriend": "partner", "girlfriend": "partner",
    # People who serve the user: "用户的医生重新测试了他" is about the doctor, and its "医生" once tied it to the
    # user's new job as a nurse (the work topic), which the bundled model then called contradicted and closed.
    "医生": "doctor", "大夫": "doctor", "doctor": "doctor", "牙医": "dentist", "dentist": "dentist",
    "老师": "teacher", "teacher": "teacher", "教练": "coach", "coach": "coach", "律师": "lawyer", "lawyer": "lawyer",
    "邻居": "neighbor", "neighbor": "neighbor", "neighbour": "neighbor", "房东": "landlord", "landlord": "landlord",
    "同学": "classmate", "classmate": "classmate",
}  # fmt: skip


def relation_words(relation: str) -> tuple[str, ...]:
    """The words, in both languages, of one relation as :func:`subject_of` names it ("child": 女儿, 儿子, son …)."""
    return tuple(word for word, named in _RELATIONS.items() if named == relation)


_ZH_OWNER = lazy_pattern(r"^用户(?:的)?(" + "|".join(k for k in _RELATIONS if not k.isascii()) + ")")
_EN_OWNER = lazy_pattern(
    r"^(?:the )?user's (?:\w+ )?(" + "|".join(k for k in _RELATIONS if k.isascii()) + ")s?\\b", re.I
)
_USER = lazy_pattern(r"^(?:用户|the user\b|user\b|我)", re.I)
_ASSISTANT = lazy_pattern(r"^(?:助手|the assistant\b|assistant\b)", re.I)
# A fact that opens with a person's name ("Dana owns the payments API"): the extractor writes facts about the
# user as "User ..." / "用户...", so a named subject is someone else (the user's relatives may have names, though).
_NAMED = lazy_pattern(r"^(?!(?:The|This|That|These|Those|It|Its|There|User|Users|Assistant)\b)([A-Z][a-z][\w'-]*)\b")


# "用户的妹妹叫林小雨" / "User's sister is named Lin" is the user's own relationship, not a fact about the sister.
_NAMING = lazy_pattern(
    r"^\s*(?:叫|名叫|名字(?:是|叫)|的名字|is (?:named|called)|'?s? name is|,? named|,? called)", re.I
)


# What someone says of the user is the user's fact: "用户医生说我其实对青霉素不过敏" corrects the user's allergy; read
# as the doctor's, it was refused as "about different people" and the allergy stayed (a user trial).
_SAYS_OF_THE_USER = lazy_pattern(
    r"^\s*(?:说|告诉(?:我|用户)|讲)(?:了)?[，,：:]?\s*(?:我|用户)"
    r"|^\s*(?:said|says|told (?:me|the user|user))(?: that)?,?\s+(?:i\b|user\b|the user\b)",
    re.I,
)


# The user correcting what was said: the fact is about what follows, whoever that is.
_CORRECTS_WHAT_FOLLOWS = lazy_pattern(r"^\s*(?:纠正|更正|澄清|\b(?:corrected|corrects|clarified|clarifies)\b)", re.I)


def subject_of(text: str) -> str:
    """'user', 'assistant', 'rel:<relation>' for a relative of the user, 'name:<Name>' for a person named at the
    start, or 'other' (no subject recognised)."""
    text = text.strip()
    owner = _ZH_OWNER.match(text) or _EN_OWNER.match(text)
    if owner:
        if _NAMING.match(text[owner.end() :]) or _SAYS_OF_THE_USER.match(text[owner.end() :]):
            return "user"
        return "rel:" + _RELATIONS[owner.group(1).lower()]
    if user := _USER.match(text):
        # "User corrected the age of 朵朵 to 5" is about 朵朵: refused as another person than "用户女儿朵朵今年6岁"
        # (a user trial), the wrong age stayed
        return "other" if _CORRECTS_WHAT_FOLLOWS.match(text[user.end() :]) else "user"
    if _ASSISTANT.match(text):
        return "assistant"
    named = _NAMED.match(text)
    return f"name:{named.group(1)}" if named else "other"


def named_one(text: str) -> str | None:
    """Whose name a fact gives: 'self' for the user's own ("用户叫王美", "User's name is Daniel"), the relation for a
    relative's ("用户妹妹叫吴小雨": sister), None for anything else ("用户领养了一只狗叫 Mochi" names the dog)."""
    text = text.strip()
    owner = _ZH_OWNER.match(text) or _EN_OWNER.match(text)
    if owner:
        return _RELATIONS[owner.group(1).lower()] if _NAMING.match(text[owner.end() :]) else None
    user = _USER.match(text)
    return "self" if user and _NAMING.match(text[user.end() :]) else None


# "named" tied "User has been dating a guy named 陈宇" to "User adopted a corgi … and named him 豆包", which the
# bundled model called a contradiction: the dog was closed (a user trial).
_NAMING_WORDS = frozenset({"name", "names", "named", "called", "叫", "名叫", "名字"})


def _tied(fact: str, old: str) -> bool:
    """What a contradiction needs beyond closeness of meaning: a shared word or everyday topic. Two facts of one
    shape ("User no longer drinks oolong tea" / "User no longer eats meat") are close, and the bundled model called
    them a contradiction. Naming counts only as the name of one person: the model called "用户领养了一只狗叫 Mochi"
    a contradiction of "用户妹妹叫吴小雨", and "User's brother is called Tom" one of the sister's name (a trial)."""
    if shared_words(fact, old) - _NAMING_WORDS or shared_topics(fact, old) - {"name"}:
        return True
    whose = named_one(fact)
    return whose is not None and whose == named_one(old) and "name" in shared_topics(fact, old)


def different_people(a: str, b: str) -> bool:
    """True when the texts are surely about different people. 'other' (no subject found) could be anyone; a named
    person is not the user, but could be a relative the user mentions by relation elsewhere."""
    first, second = subject_of(a), subject_of(b)
    if "other" in (first, second):
        return False
    if any(s.startswith("name:") for s in (first, second)) and any(s.startswith("rel:") for s in (first, second)):
        return False
    return first != second


# A change or an aversion said outright: "用户现在改喝茶了" changes what "用户喜欢喝咖啡" said, and "用户讨厌猫" what
# "用户喜欢猫" said, though no word but the topic's ties them.
_CHANGED = lazy_pattern(
    r"改|换|变成|成了|只(?=[喝吃用穿听看玩养])|讨厌|厌倦|受不了|现在|如今|更喜欢"
    r"|\b(?:switched|changed|instead|rather than|now|prefers?|only|hates?|dislikes?|can't stand|gone|became|become"
    r"|turned)\b",
    re.I,
)
# A correction said outright, which may name the thing in the other language: "用户其实对青霉素不过敏（之前是误诊）"
# corrects "User is allergic to penicillin", and no shared word can show it. In one script the things can be
# compared, and a correction of another one closes nothing: the same correction closed "用户对花生过敏" (a re-trial).
_CORRECTION = lazy_pattern(r"其实|实际上|误诊|\b(?:actually|in fact|misdiagnos\w*)\b", re.I)


# How close in meaning a correction in one script must be to a memory in the other to correct it (the bundled USE,
# measured on a user trial's allergies): "User's penicillin allergy was a misdiagnosis" is 0.60 from "用户对青霉素过敏"
# and 0.34 from "用户也对芒果过敏", which it closed; "…actually allergic to shrimp, not peanuts" is 0.48 from
# "用户对花生过敏" and 0.43 from "用户对青霉素过敏"; "用户…其实对青霉素不过敏" 0.45 from "User is allergic to peanuts".
CROSS_SCRIPT_CORRECTION = 0.47


def both_can_hold(fact: str, old: str, *, dated: bool = False, similarity: float | None = None) -> str | None:
    """Why a "contradicts" answer cannot stand, or None. The bundled model called a plan and a state contradictory
    ("用户什么都吃" against "用户计划在12月25日和林小雪一起吃饭": the new fact was stored as replaced by the plan), and
    a second value of a topic that holds several a change ("User is allergic to penicillin" closed "用户对花生过敏").
    ``dated``: the fact names when it happens, so a plan of it is a change from then ("用户下个月搬到上海").
    Traditional text is read as Simplified."""
    fact, old = simplified(fact), simplified(old)
    fact_plans, old_plans = PLANNED.search(fact) is not None, PLANNED.search(old) is not None
    if old_plans and not fact_plans and not calls_off(fact):
        return "what holds now does not call off a plan; kept both"
    if fact_plans and not old_plans and not dated:
        return "a plan with no date changes nothing yet; kept both"
    # Each about everyday topics, none in common: tied by a name or a place alone ("User corrected the age of 朵朵 to
    # 5" closed "朵朵在上海的星光幼儿园上大班", and "用户朵朵今天开始上小学了" closed the correction: a user trial;
    # "User works at Tencent in Shenzhen" is no move). An ending still ends whatever the one ended had.
    own, others = topics_of(fact) - {"name"}, topics_of(old) - {"name"}
    if own and others and not own & others and not ENDED_WORDS.search(fact) and not calls_off(fact):
        return f"about {', '.join(sorted(own))}, not {', '.join(sorted(others))}; kept both"
    # News of someone or something named, of no everyday topic, ending, changing and correcting nothing, tied by the
    # name alone: "用户的小橘走丟了三天，終於找回來了！" closed "用户養了一隻貓叫小橘，是橘貓" (a user trial).
    named = {name.casefold() for name in (*names_in(old), *names_in(fact), *doubled_names(old))}
    said_of_the_named = {word.casefold() for word in shared_words(fact, old)} <= named
    unchanged = not (ENDED_WORDS.search(fact) or calls_off(fact) or _CHANGED.search(fact) or _CORRECTION.search(fact))
    if not own and shared_words(fact, old) and said_of_the_named and unchanged:
        return "news of the one it names, changing nothing the other says; kept both"
    # Tied by the kind of thing alone: one more of it, or the end of another one of it ("用户不再吃素了" ends no
    # favourite ramen). A change said outright ("用户现在改喝茶了") still replaces.
    topics = shared_topics(fact, old) - {"name"}  # "User has a dog named Max": the naming is the pet's
    if topics and topics <= MANY_VALUED and not same_things(fact, old) and not _CHANGED.search(fact):
        across = (HAN_CHAR.search(fact) is None) != (HAN_CHAR.search(old) is None)
        close = similarity is None or similarity >= CROSS_SCRIPT_CORRECTION
        # said in the other script, a correction or a plan called off may name the thing in other words: "User's
        # trip to Japan is off" calls off "用户下个月要去日本旅游" (a user trial), if close in meaning
        if not (across and (_CORRECTION.search(fact) or calls_off(fact)) and close):
            return f"another of a kind a person holds several of ({', '.join(sorted(topics))}); kept both"
    return None


def past_event_stands(fact: str, old: MemoryItem) -> str | None:
    """Why a "contradicts" answer cannot close ``old``, or None: what happened at a time stays true after it.
    The bundled model called "User has been dating 陈宇" a contradiction of "User broke up with Leo last week", and
    the breakup was closed (a user trial); a later state or event is recorded beside it, and a question about now
    is answered by the newer one (read/newer.py). Only a correction said outright closes it ("其实我们没有领养")."""
    if old.kind != "event" or _CORRECTION.search(fact):
        return None
    return "what happened then stays true; kept both"


def covers(fact: str, old: str, minimum: float) -> bool:
    """Does ``fact`` repeat at least ``minimum`` of ``old``'s content words (so it can replace it without
    losing anything)? A memory with no content words is never covered."""
    words = content_words(old)
    return bool(words) and len(words & content_words(fact)) / len(words) >= minimum


def _subsumes(fact: NewFact, candidate: Candidate, rules: DecideRules) -> bool:
    """ "User's dog is a beagle called Biscuit" over "User has a dog": close, same person, nothing lost."""
    return (
        candidate.similarity >= rules.subsume_min_similarity
        and not different_people(fact.text, candidate.item.text)
        and covers(fact.text, candidate.item.text, rules.subsume_min_coverage)
    )


def decide(
    fact: NewFact,
    candidates: Sequence[Candidate],
    answers: Sequence[Relation | None],
    rules: DecideRules | None = None,
) -> Resolved:
    rules = rules or DecideRules()
    rejected: list[Rejection] = []
    same: list[Candidate] = []
    closes: list[tuple[Candidate, str]] = []
    for candidate, answer in zip(candidates, answers, strict=True):
        item = candidate.item
        if answer is None:
            rejected.append(Rejection("no answer", item.id, item.text, "the judge gave no valid answer; kept both"))
            continue
        if answer == "unrelated":  # both can be true; the fact may still be the fuller version of the memory
            if _subsumes(fact, candidate, rules):
                closes.append((candidate, "refines"))
            continue
        if different_people(fact.text, item.text):
            rejected.append(Rejection(answer, item.id, item.text, "about different people; kept both"))
            continue
        if answer == "same":
            if candidate.similarity >= rules.same_min_similarity or same_text(fact.text, item.text):
                same.append(candidate)
            else:
                reason = f"not close enough ({candidate.similarity:.2f}); kept"
                rejected.append(Rejection("same", item.id, item.text, reason))
            continue
        if candidate.evidence is None:
            rejected.append(Rejection(answer, item.id, item.text, "nothing ties the two together; kept both"))
            continue
        if answer == "contradicts" and not _tied(fact.text, item.text):
            reason = "close in form, but no word or topic in common; kept both"
            rejected.append(Rejection(answer, item.id, item.text, reason))
            continue
        held = (
            past_event_stands(fact.text, item)
            or both_can_hold(fact.text, item.text, dated=fact.event_time is not None, similarity=candidate.similarity)
            if answer == "contradicts"
            else None
        )
        if held is not None:
            rejected.append(Rejection(answer, item.id, item.text, held))
            continue
        if answer == "refines" and not covers(fact.text, item.text, rules.refine_min_coverage):
            rejected.append(Rejection("refines", item.id, item.text, "does not repeat the old content; kept both"))
            continue
        closes.append((candidate, answer))
    if same:
        best = max(same, key=lambda c: c.similarity)
        return Noop(fact, best.item, "the judge: same as a close memory", tuple(rejected))
    if closes:
        return Update(fact, tuple(c.item for c, _ in closes), closes[0][1], tuple(rejected))
    return Add(fact, tuple(rejected))
