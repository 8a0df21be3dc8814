"""A question about the user answered by what the user said of themselves before what they said of others.

"What am I allergic to?" matched "My colleague Anna is allergic to shellfish" on every word and "我对花生过敏" on
meaning alone, so the colleague's allergy came first; "我住在哪里？" found "我妹妹住在成都" above "I live in Hangzhou".
A question in the first person that names nobody else asks about the user: a statement about the user ranking close
below a statement about someone else (a relative, a friend, a colleague; "Tom's ...", "他...") moves above it, the
way read/newer.py moves a later statement up. Close: within ``MARGIN`` of its score (a statement of change: within
half, read/move_up.py), or as close in meaning (the other's lead is then words both share). A clearly better match
about someone else keeps its place, and a memory whose subject cannot be told (an extracted fact, a plain
sentence) is neither. Pets are not "someone else": "我的猫叫团子" is the user's answer to "我养了什么宠物？".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from itertools import groupby

from memstrata.graph.vocabulary import EN_FAMILY, FAMILY
from memstrata.indexing import category_text, own_index_text, states_for_the_user
from memstrata.lexical import has_han, jieba
from memstrata.lifecycle.decay import said_at
from memstrata.modality import ends_or_corrects
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms, query_terms
from memstrata.read.move_up import means_as_much, move_up, within_reach
from memstrata.read.names import doubled_names, named_in_other_script
from memstrata.read.whose import (
    ALWAYS_TIMES,
    ASKS_THE_REPLY,
    CAPITALISED,
    FIRST_PERSON,
    MONTH_AS_TIME,
    NAMED_AS_A_TIME,
    asks_about_the_user,
    whose,
)
from memstrata.types import MemoryItem, SearchHit

MARGIN = 0.25  # a statement about the user at most this share below one about someone else answers first
# A statement naming the one a question asks about, below one of the user's own that does not name them: the user's
# own matches on the topic's words alone ("Bought a car finally" for "What car does Feng drive?", 0.33 to 0.21).
THEIRS_MARGIN = 0.5


def own_before_others(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    if not asks_about_the_user(query_text):
        return list(hits)

    asked = frozenset(query_terms(query_text))

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if whose(above.memory) != "another" or whose(hit.memory) != "user":
            return False
        if within_reach(hit, above, margin) or means_as_much(hit, above):
            return True
        # The other's matches the question only on its category's words, and the user's own on those too: its lead
        # is its length (BM25), not a better match. "朵朵的芒果过敏好像好了" led "用户的高血压…" for "我有什么病？",
        # both matching on 病 alone (the health category's word), 0.38 to 0.20 (a user trial).
        theirs = asked & memory_terms(category_text(above.memory))
        if not theirs or asked & memory_terms(own_index_text(above.memory)):
            return False
        return theirs <= _words_asked(hit.memory, asked) and within_reach(hit, above, THEIRS_MARGIN)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


def _words_asked(item: MemoryItem, asked: frozenset[str]) -> frozenset[str]:
    return asked & memory_terms(f"{own_index_text(item)} {category_text(item)}")


def theirs_before_own(
    hits: Sequence[SearchHit], query_text: str, *, margin: float = THEIRS_MARGIN, names: tuple[str, ...] = ()
) -> list[SearchHit]:
    """The mirror of :func:`own_before_others`: a question about someone named ("What car does Feng drive?", "我哥住在
    哪？") answered by what was said of them before what the user said of themselves. "Bought a car finally — a used
    Corolla" matched on "car" and led "My brother Feng … now drives a Polestar 2" (found by a user trial). Close as
    there: within ``margin``, or as close in meaning. ``names``: those the scope gives the relatives asked about
    (read/relatives.py: "Correction: Emma is a nurse" is about "my sister")."""
    named = people_named(query_text, names)
    if not named:
        return list(hits)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        if whose(above.memory) != "user" or _has_a_speaker(above):
            return False
        if mentions(named, above, query_text) or not mentions(named, hit, query_text):
            return False
        if not states_for_the_user(hit.memory):  # a reply echoes the user: "Lucky you, a chef boyfriend!" above
            return False  # "my bf 阿杰 is a chef" for "Who was my boyfriend in 2022?" (a user trial)
        if said_at(above.memory) > said_at(hit.memory) and ends_or_corrects(above.memory.text):
            # the user's later ending or call-off is not passed by what it may end: "Planning a trip to Japan …,
            # probably Kyoto" names the Kyoto of "Are we still going to Kyoto?" (read as someone named) and passed
            # "用户不再去日本" (a user trial)
            return False
        return within_reach(hit, above, margin) or means_as_much(hit, above)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


def named_first(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    """A "who" question about the user's people ("Who is my girlfriend?", "我女朋友是谁？") asks for a name: a hit that
    names someone (a capitalised Latin word inside the sentence, or a Chinese name jieba tags as one: 阿杰) answers
    before one that does not, where the two are within ``margin``. "lol my gf just beat me at mario kart AGAIN" led
    "Who was my girlfriend in 2021?" over "我女朋友Priya下周生日" once "gf" was read as girlfriend (a held-out user
    trial)."""
    if not (_WHO.search(query_text) and FIRST_PERSON.search(query_text)):
        return list(hits)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        named, unnamed = _gives_a_name(hit.memory.text), _gives_a_name(above.memory.text)
        return named and not unnamed and within_reach(hit, above, margin)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)


_WHO = lazy_pattern(r"^\s*(?:who|whom)\b|是谁|谁是", re.IGNORECASE)
# A capitalised Latin word inside a sentence, Chinese beside it or not ("我女朋友Priya下周生日"), that is no time.
_LATIN_NAME = lazy_pattern(r"(?<![A-Za-z])(?<!^)(?<![.!?]\s)(?!I\b)[A-Z][a-z]{1,20}(?![A-Za-z])")


def _gives_a_name(text: str) -> bool:
    if _LATIN_NAME.search(MONTH_AS_TIME.sub(" ", ALWAYS_TIMES.sub(" ", text))):
        return True
    return has_han(text) and any(tag == "nr" for _, tag in jieba().tag(text))


def _has_a_speaker(hit: SearchHit) -> bool:
    """A turn of a transcript between named people (LoCoMo's Caroline and Melanie) is its speaker's, not the user's
    own: nothing tells which speaker the user is. There, a question about Melanie answered by what Melanie said
    before what Caroline said cost LoCoMo's questions that ask one speaker about what the other did (adversarial
    nDCG@10 0.697 -> 0.550)."""
    return bool(hit.memory.metadata.get("speaker"))


def mentions(named: re.Pattern[str], hit: SearchHit, question: str = "") -> bool:
    """The memory names them, or they said it (a turn by Caroline is hers though it does not say her name), or it
    names one by the category's words ("so I report to the CEO, Sarah Kim" names the user's manager:
    indexing.category_text). With the ``question`` that named them, also in the other script: "用户成都的行程取消了"
    names what "Are we going to Chengdu?" asks about (read/names.named_in_other_script; a user trial)."""
    item = hit.memory
    if named.search(own_index_text(item)) is not None or named.search(category_text(item)) is not None:
        return True
    return bool(question) and named_in_other_script(frozenset(memory_terms(item.text)), question)


@lru_cache(maxsize=1024)
def topic_terms(query: str) -> tuple[str, ...]:
    """The question's words less those naming the people it asks about: what it asks of them. "我哥哥住在哪個城市？"
    asks where he lives; "我哥去年年底结婚了" and "我哥养了一只金毛" share only 哥 with it and, as that matched
    both alike, the later one moved up as if it answered for the same reasons (read/newer.py). A partner's or a
    boss's word stays: the role's holder may change."""
    named = people_named(query)
    # "us" is the speaker's household, not what is asked: "Does my mom live with us?" asks where she lives, and
    # "my mom is moving in with us" matched it on "us" where her later "moved back to Edison" did not (a user trial)
    passed = _ASPECT if _THE_US.search(query) else _ASPECT | {"us"}
    return tuple(
        term
        for term in query_terms(query)
        if term not in passed and (named is None or not named.search(term) or _ROLE.search(term))
    )


_THE_US = lazy_pattern(r"\b(?:US|U\.S\.?|USA)\b")


# Words of whether a state goes on, not of the state: "Am I still vegetarian?" asks of the diet, and "Honestly great.
# Still eat eggs and cheese." matched it on "still" alone, so the later "back to eating chicken and fish" did not
# answer for the same reasons and stayed below it.
_ASPECT = frozenset({"still", "anymore", "currently", "again"})


# A partner or a boss is whoever holds the role now: "认识了一个新男朋友" answers "我男朋友是做什么的？" instead of
# the one before, for the word the question names him by; "My manager is Sophie Wu" (2023) answers "Who is my boss?"
# instead of the manager of 2021, which led on its words alone.
_ROLE = lazy_pattern(
    r"男朋友|女朋友|对象|老婆|老公|妻子|丈夫|太太|爱人|另一半|老板|领导|上司|经理"
    r"|\b(?:boyfriend|girlfriend|wife|husband|partner|spouse|boss|manager|supervisor)s?\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)
def people_named(query: str, names: tuple[str, ...] = ()) -> re.Pattern[str] | None:
    """What a memory about the people a question asks of says: their names (also ``names``, those the scope gives
    the relatives it asks about), or their relation to the user in either language ("my brother": brother, 哥哥,
    我哥…); None for a question about the user or about no one."""
    if asks_about_the_user(query) or ASKS_THE_REPLY.search(query):
        return None
    timeless = NAMED_AS_A_TIME.sub(" ", MONTH_AS_TIME.sub(" ", ALWAYS_TIMES.sub(" ", query)))
    said = [match.group().removesuffix("的") for match in CAPITALISED.finditer(timeless)]
    said += doubled_names(timeless)  # "朵朵几岁了？" asks of 朵朵: the name is whom it asks about, not what (a trial)
    # a name as a whole word: "Tom" is not in "tomorrow"
    words = [_as_word(name) for name in [*said, *names] if name.lower() not in _NOT_NAMES]
    words += [said_so for asked, said_so in _KIN if asked.search(query)]
    return re.compile("|".join(words), re.IGNORECASE) if words else None


# Relatives and others by their words in both languages and the one character said after 我: the one a question asks
# about, not any relative ("我妈以前是做什么的？" took "我妹去成都了…" for a statement about the mother, and it
# answered above hers).
def _kin(english: str, chinese: str, short: str = "") -> str:
    return "|".join([rf"\b(?:{english})s?\b", chinese, *([f"我(?:的|家)?[{short}]"] if short else [])])


_SPLIT = ("sibling_of", "child_of")  # the graph's groups, asked of one by one here
# A boyfriend or girlfriend is asked about as a spouse is: "What does my boyfriend do?" was read as a question about
# no one, "我男朋友是做什么的？" as one about a friend, and the user's own job answered them (a user trial).
_DATING = _kin("boyfriend|girlfriend|bf|gf", "男朋友|女朋友|男友|女友|我的?对象")  # not "Python 对象"
_ONE_BY_ONE = (
    _kin("brother", "哥哥|弟弟", "哥弟"),
    _kin("sister", "姐姐|妹妹", "姐妹"),
    _kin("father|dad", "父亲|爸爸|老爸", "爸"),
    _kin("mother|mom|mum", "母亲|妈妈|老妈", "妈"),
    _DATING,
    *(_kin(english, FAMILY[relation]) for relation, english in EN_FAMILY.items() if relation not in _SPLIT),
)
# (what asks about them, what says them): parents are either
_KIN = (
    *((lazy_pattern(said, re.IGNORECASE), said) for said in _ONE_BY_ONE),
    (lazy_pattern(r"\bparents\b|爸妈|父母", re.IGNORECASE), "|".join([r"\bparents\b|爸妈|父母", *_ONE_BY_ONE[2:4]])),
)


def _as_word(name: str) -> str:
    return rf"\b{re.escape(name)}\b" if name.isascii() else re.escape(name)


_NOT_NAMES = frozenset({"what", "where", "who", "when", "which", "how", "why", "does", "did", "is", "are", "was"})


def later_of_equals_first(hits: Sequence[SearchHit], query_text: str, names: tuple[str, ...] = ()) -> list[SearchHit]:
    """Hits of one score, the later said first (the user's own first, for a question about the user). A hit moved up
    takes the score of the one it passes (read/move_up.py), so hits that each answer instead of the same one tie
    with it, in the order they were moved: an imported history answered "我的手机号是多少？" with the number of
    2023 above the one of 2025 that replaced it (0.385 each). For a question about someone named or a relative,
    what names them first (``names`` as in :func:`theirs_before_own`)."""
    about_the_user = asks_about_the_user(query_text)
    named = people_named(query_text, names)

    def order(hit: SearchHit) -> tuple[bool, datetime]:
        own = about_the_user and whose(hit.memory) == "user"
        return own or (named is not None and mentions(named, hit, query_text)), said_at(hit.memory)

    ordered: list[SearchHit] = []
    for _, tied in groupby(hits, key=lambda hit: hit.score):
        ordered.extend(sorted(tied, key=order, reverse=True))
    return ordered
