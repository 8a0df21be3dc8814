"""What ties a new fact to a stored memory, independent of any model: close meaning, a shared name or word,
or a shared everyday topic (where someone lives, works, what they drink, their pet, their car ...).

The bundled 1.5B model, asked about two Chinese facts on different topics ("用户下周去成都出差" / "用户喜欢喝乌龙茶"),
sometimes answers "contradicts". A memory is therefore only ever closed when the engine sees its own evidence
that the two are about the same thing; without it the pair is not even asked about.
"""

from __future__ import annotations

import re
from functools import cache

from memstrata.lexical import keyword_tokens
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms
from memstrata.topics import topics_of

# Words every fact shares: they tie nothing together.
# "no longer" / "不再" say that something changed, not what: "User no longer drinks oolong tea" is no change of
# "User no longer eats meat".
# Nor does a verb of liking: "User loves coffee" was closed by "User's golden retriever Biscuit loves the snow".
_GENERIC = frozenset({"user", "user's", "用户", "助手", "assistant", "now", "现在", "also", "还", "很", "喜欢", "like",
                      "likes", "love", "loves", "loved", "enjoy", "enjoys", "prefer", "prefers", "really", "爱", "热爱",
                      "喜爱", "一个", "一只", "longer", "anymore", "不再", "已经", "再也",
                      # when, how much, with whom: "之前" tied "用户之前是误诊" to an unrelated memory, which it closed
                      "之前", "以前", "以后", "最近", "一直", "所有", "一起", "计划", "打算", "准备",
                      # "last" tied "User's cat 团子 died last week" to "User moved … last month", and closed the home
                      "last", "next", "week", "weeks", "month", "months", "year", "years", "day", "days", "ago",
                      "yesterday", "today", "tomorrow", "tonight", "weekend", "recently", "news", "sad"})  # fmt: skip
# Topics a person holds several of at once: allergies and illnesses, pets, drinks, foods, sports, studies, trips. A
# second one is no change of the first ("I'm allergic to penicillin too" closed the peanut allergy, "我不再吃素了" the
# favourite ramen: a user trial).
MANY_VALUED = frozenset({"health", "pet", "drink", "exercise", "study", "season", "diet", "travel"})


def content_words(text: str) -> set[str]:
    """Keyword tokens (stop words removed) of two characters or more, without the words every fact shares."""
    return {t for t in keyword_tokens(text) if len(t) > 1 and t not in _GENERIC}


def shared_words(a: str, b: str) -> set[str]:
    return content_words(a) & content_words(b)


def shared_topics(a: str, b: str) -> frozenset[str]:
    return topics_of(a) & topics_of(b)


# Words that name a kind of thing, not the thing: two allergies share "allergic", two drinks "drinks".
_KIND_WORDS = frozenset({"allergic", "allergy", "allergies", "过敏", "drink", "drinks", "drinking", "eat", "eats",
                         "pet", "pets", "宠物", "study", "studies", "学习", "play", "plays", "has", "have", "own",
                         "owns", "named", "called"})  # fmt: skip


@cache
def _not_a_thing() -> frozenset[str]:
    """The match forms of those words: read on first use, since segmenting the Chinese ones loads jieba's
    dictionary (~0.17 s of every command's start-up otherwise)."""
    return frozenset(memory_terms(" ".join(_GENERIC | _KIND_WORDS)))


# One thing said in words that share no match form, in either language: a diet of no meat is "吃素", "素食者", "全素",
# "vegetarian" ("用户不再吃素" did not end "用户是素食者", nor "User is vegetarian": a user trial).
_ONE_THING = ((lazy_pattern(r"吃素|素食|全素|\b(?:vegetarian|vegan|veggie)\b", re.I), "·vegetarian"),)


def same_things(a: str, b: str) -> set[str]:
    """The match forms both share besides those naming a kind ("allergic", "drinks") or saying when: what says the
    two are about one thing ("smoke" of "quit smoking" and "smokes five a day", "咖啡"), not two of one kind."""
    shared = {term for term in memory_terms(a) & memory_terms(b) if len(term) > 1 and term not in _not_a_thing()}
    return shared | {thing for pattern, thing in _ONE_THING if pattern.search(a) and pattern.search(b)}


def evidence(new: str, old: str, similarity: float, close: float) -> str | None:
    """Why the two may be about the same thing, or None: similarity at least ``close``, a shared word or name,
    or a shared topic."""
    if similarity >= close:
        return f"similar ({similarity:.2f})"
    words = shared_words(new, old)
    if words:
        return "shared words: " + ", ".join(sorted(words))
    topics = shared_topics(new, old)
    if topics:
        return "shared topic: " + ", ".join(sorted(topics))
    return None
