"""What one statement takes back of another: an ending or a correction of what both are about, a plan called off.

Read by :mod:`memstrata.read.newer`, which moves the later statement above the one it takes back. A correction takes
back only what it says it does ("不是 A") and only of the topic it is of; an ending is of what both statements say,
the words of the ending aside, in either script or by the category both name.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache

from memstrata.categories import instances_named, kinds_named
from memstrata.han import simplified
from memstrata.indexing import category_text, states_for_the_user
from memstrata.lexical import has_han
from memstrata.modality import ENDS_OR_CORRECTS_WORDS, HEDGED, NOT_YET, calls_off, corrects, ends_or_corrects
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms
from memstrata.read.names import doubled_names, named_in_both, named_in_other_script, names_in
from memstrata.read.whose import subject, whose
from memstrata.topics import topics_of
from memstrata.types import MemoryItem

# A booking is a plan too: "订了三月去冰岛看极光，民宿都付了定金" stayed above "冰岛去不成了" (a held-out trial).
_BOOKED = lazy_pattern(
    r"\b(?:booked|reserved|bought\s+(?:the\s+|our\s+)?(?:flights?|tickets?))\b|订了|订好|预订|定金|买了?(?:机票|门票|车票)",
    re.IGNORECASE,
)


# A question about what someone said: an ending takes back a state, not a saying. "Tofu passed away this morning" led
# "What did the vet say about Tofu?" above "My cat Tofu has kidney disease, the vet put her on a special diet", which
# the death ends as a state, while what the vet said stays said (a held-out user trial, t13).
_ASKS_WHAT_WAS_SAID = lazy_pattern(
    r"\bwhat\s+(?:did|does|do|has|have)\s+[\w'. -]{1,30}?\s+(?:say|said|tell|told|recommend|suggest)"
    r"|怎么说|说了什么|说什么|怎么讲|讲了什么|怎么建议|建议了?什么",
    re.IGNORECASE,
)


def asks_what_was_said(question: str) -> bool:
    """ "What did the vet say about Tofu?", "医生怎么说？": a question an ending of the state said does not answer."""
    return bool(_ASKS_WHAT_WAS_SAID.search(simplified(question)))


def calls_off_plan(later: MemoryItem, earlier: MemoryItem) -> bool:
    """A plan called off after it was made ("Japan is off" after "Planning to go to Japan in April"): the plan
    matches "Did I go to Japan?" on every word (0.58 to 0.26) but did not happen. The assistant's reply to a plan
    is of the plan too: "Lisbon in October is lovely, still warm", indexed with the user's "Thinking Lisbon for
    October", led "Am I still going to Lisbon in October?" (0.80) above "Lisbon's cancelled" (0.24)."""
    planned = (
        NOT_YET.search(earlier.text)
        or _BOOKED.search(earlier.text)
        or (not states_for_the_user(earlier) and NOT_YET.search(str(earlier.metadata.get("preceding_turns", ""))))
    )
    return bool(planned) and calls_off(later.text) and ends_or_corrects_it(later, earlier)


def about_others(later: MemoryItem, earlier: MemoryItem) -> bool:
    """The later statement is about someone else and the earlier one about the user, each said so at its start (not
    guessed from a turn's role): another's news says nothing of the user's own state. "父母住在苏州，都已经退休了"
    moved above the user's own city for "我住在哪？" and the job for "我在哪家公司上班" (the later statement answering
    for the same reasons, or an ending; found by a user trial). The other way round stays: "I broke up with 陈宇"
    ends "我男朋友叫陈宇"."""
    return subject(later.text) == "another" and subject(earlier.text) == "user"


def ends_or_corrects_it(
    later: MemoryItem, earlier: MemoryItem, *, by_category: bool = True, question: str = ""
) -> bool:
    """A later statement that ends or corrects one it shares a subject with ("我已经戒掉咖啡了" after "我每天早上
    喝两杯咖啡", "其实豆豆是柴犬不是柯基" after "我家狗豆豆是柯基"): it answers instead of the earlier one whatever
    words the question matched them on, also across scripts ("Do I drink coffee?"), since what the earlier one said
    no longer holds; an ending does not, for a question about what someone said. The subject is what both say, the
    words of the ending or correction aside, also by the category both name in either language: "Correction on the
    allergy thing: it's actually pineapple, not kiwi" corrects "医生说我对猕猴桃过敏" (an allergy both) and shares no
    word with it."""
    if not (states_for_the_user(later) and ends_or_corrects(later.text)):
        return False
    if about_others(later, earlier):
        return False
    if question and asks_what_was_said(question) and not corrects(later.text):
        return False
    if question and _corrects_another_of_its_topics(later, earlier, question):
        return False
    if corrects(later.text) and not _says_what_it_takes_back(later.text, earlier.text):
        return False
    # the words of an ending are no subject, whole or in part: "取消" of "取消了" tied a Tibet trip called off to the
    # Hokkaido trip called off years before (a held-out trial)
    ending = " ".join(found.group() for found in ENDS_OR_CORRECTS_WORDS.finditer(simplified(later.text)))

    def subject_of(terms: frozenset[str]) -> bool:
        return any(not ENDS_OR_CORRECTS_WORDS.fullmatch(term) and term not in ending for term in terms)

    later_terms, earlier_terms = frozenset(memory_terms(later.text)), frozenset(memory_terms(earlier.text))
    if subject_of(later_terms & earlier_terms):
        return True
    # one place or person in the two scripts: "用户成都的行程取消了" and "User booked flights to Chengdu"
    said = frozenset(term for term in later_terms ^ earlier_terms if subject_of(frozenset((term,))))
    if named_in_other_script(said, later.text, earlier.text) or named_in_both(later.text, earlier.text):
        return True
    if not by_category:
        return False
    # By category alone, only of the kinds the earlier one is of: "Actually 不是 shellfish allergy，是 crab 过敏" (a
    # health condition, and food) corrected "最近在 keto diet" through the food they share and answered "Am I on a
    # diet?" in its place (a user trial).
    return kinds_named(later.text) <= kinds_named(earlier.text) and subject_of(
        _subject_terms(later) & _subject_terms(earlier)
    )


def ends_the_same_thing(later: MemoryItem, earlier: MemoryItem, *, question: str = "") -> bool:
    """:func:`ends_or_corrects_it` where both name one instance of a category by the same name (a medicine, a breed, a
    car): what ends it ends that thing, however little the later statement shares of the question, so it answers from
    anywhere ("User stopped taking melatonin", 0.19, matched "我在吃什么药？" on 药 alone, and "Doctor put me on
    melatonin 3mg for sleep, 睡前吃", 0.57, on 吃 and 药; a user trial)."""
    named = {instance.lower() for instance, _ in instances_named(later.text)}
    if not named & {instance.lower() for instance, _ in instances_named(earlier.text)}:
        return False
    return ends_or_corrects_it(later, earlier, question=question)


def settles_a_maybe(later: MemoryItem, earlier: MemoryItem) -> bool:
    """A maybe settled by the same person's later plain statement (the caller checks they answer for the same
    reasons), from anywhere in the window: "Yes, I can cook Thursday to Sunday now" (0.50) after "User might cook four
    nights a week" (0.60), which led "Which nights can I cook?" on its literal "nights" (a user trial)."""
    if not HEDGED.search(earlier.text) or HEDGED.search(later.text):
        return False
    said_by = whose(later)
    return said_by is not None and said_by == whose(earlier)


def _corrects_another_of_its_topics(later: MemoryItem, earlier: MemoryItem, question: str) -> bool:
    """``later`` corrects one everyday topic of ``earlier`` (topics.py), the question asks another of its topics,
    and the two share nothing but a name or a number. "Correction: 朵朵 is 5, not 6" corrects the age of
    "我女儿朵朵今年6岁，在上海的星光幼儿园上大班", not the kindergarten, and led "Which school does my
    daughter go to?" (a user trial). A correction that names no topic ("Sorry, I meant Shanghai, not
    Beijing"), or shares a word of what it corrects ("不是 shellfish allergy，是 crab 过敏" after "I'm
    allergic to shellfish，吃虾会起疹子"), may correct anything the earlier statement says. Nor does one of another
    topic than the question asks, or (for a question of no topic) than the earlier statement speaks of: "我记错了，朵朵
    过敏的是菠萝" (an allergy) led "朵朵在哪上学？" over "朵朵上小学了" on the name (a user trial)."""
    corrected = topics_of(later.text)
    if not (corrected and corrects(later.text)):
        return False
    asked, theirs = topics_of(question), topics_of(earlier.text)
    another = not asked & corrected if asked else bool(theirs) and not theirs & corrected
    return another and _tied_by_a_name_alone(later, earlier)


# What a correction takes back: "不是 A（，是 B）", "B, not A".
_TAKEN_BACK = lazy_pattern(
    r"不是\s*(?P<zh>[^，。！？,.!?]{1,16})|\bnot\s+(?P<en>[^,.!?;，。！？]{1,40})", re.IGNORECASE
)


def _says_what_it_takes_back(correction: str, earlier: str) -> bool:
    """Whether ``earlier`` says what ``correction`` takes back ("不是 A"): a Latin word of it, or two of its Chinese
    characters (one where it has one). "其實我不是對貓毛過敏，醫生說是塵蟎" takes back the allergy to cat hair, not
    "我養了一隻貓叫小橘", and led "我的猫叫什么？" over it on the word 貓 (a user trial). True where the
    correction says no "not" to read."""
    found = _TAKEN_BACK.search(simplified(correction))
    if found is None:
        return True
    taken = facets(tuple(memory_terms(found.group("zh") or found.group("en") or "")))
    said = facets(tuple(memory_terms(earlier)))
    if not taken:
        return True
    han, said_han = {part for part in taken if has_han(part)}, {part for part in said if has_han(part)}
    latin, said_latin = taken - han, said - said_han
    if not (latin and said_latin) and not (han and said_han):
        return True  # said in the other script ("pineapple, not kiwi" after "医生说我对猕猴桃过敏"): not to be read
    return bool(latin & said_latin) or len(han & said_han) >= min(2, len(han)) > 0


def _tied_by_a_name_alone(later: MemoryItem, earlier: MemoryItem) -> bool:
    names = {name.casefold() for item in (later, earlier) for name in (*names_in(item.text), *doubled_names(item.text))}
    shared = frozenset(memory_terms(later.text)) & frozenset(memory_terms(earlier.text))
    return all(term.isdigit() or term in names or ENDS_OR_CORRECTS_WORDS.fullmatch(term) for term in shared)


def _subject_terms(item: MemoryItem) -> frozenset[str]:
    return frozenset(memory_terms(f"{item.text}\n{category_text(item)}"))


@lru_cache(maxsize=32_768)  # a window compares each memory with many others: its facets are made once
def facets(terms: Collection[str]) -> frozenset[str]:
    """Terms to compare two statements' reasons by: a Chinese word as its characters, since segmentation cuts the
    same words apart differently ("我超爱吃辣" holds "吃", "我不吃辣了" holds "不吃": "我能吃辣吗？" matched them for
    different reasons, and the older statement stayed first)."""
    return frozenset(part for term in terms for part in (term if has_han(term) else (term,)))
