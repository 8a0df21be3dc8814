"""Facts that give one person what their turn says of another: a relative what the speaker said of themselves, or
the user what a turn said only of someone it names.

The bundled 1.5B model, given "我儿子豆豆在星光幼儿园上中班，我每天吃一片优甲乐100微克。", wrote
"用户的儿子豆豆每天吃一片优甲乐100微克": the mother's medicine stored as her son's, with confidence 0.9 (a user
trial). A fact about a relative whose words come from a clause the speaker says of themselves ("我每天吃…", "I take
…") rather than from the clauses that name the relative is read as given to the wrong person: extraction asks once
more, and a fact that still does it waits for review as pending.

Kept narrow, as the other checks are: at least two of the fact's words must come from the speaker's own clause alone,
more than from the clauses naming the relative, so "我儿子豆豆每天吃一片钙片，我也吃" ("I take them too") is not
read so, and the same word in both counts for the relative. A fact given to the user is read so only where its turn
never speaks of its speaker (no 我, I, me, my, we …), opens with a name the fact leaves out, and says at least
:data:`_SHARE` of the fact's words.
"""

from __future__ import annotations

import re

from memstrata.modality import clauses
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms
from memstrata.read.names import opening_name
from memstrata.write.decide import relation_words, subject_of

# A clause the speaker says of themselves: opening with 我 / I, not with "我儿子", "我们", "my son".
_OWN_CLAUSE = lazy_pattern(
    r"^\s*(?:(?:而|但|可是|然后|and|but|so)\s*)?(?:我(?![们的]|家)|i\b(?!'s)|i'm\b|i've\b)", re.I
)
_FRAMING = frozenset({"用户", "user", "user's"})
_LEAST = 2  # of the fact's words, from the speaker's own clause alone (or, given to the user, from the turn)
_SHARE = 0.6  # of the words of a fact given to the user, said by its turn: the fact restates what the turn says


def given_to_another(fact: str, source: str) -> list[str]:
    """The relation words of ``fact`` (about a relative: "用户的儿子…", "User's son …") when most of what it says of
    them comes from a clause of its ``source`` turn in which the speaker speaks of themselves; else []."""
    subject = subject_of(fact)
    if not subject.startswith("rel:"):
        return []
    words = relation_words(subject.removeprefix("rel:"))
    pattern = re.compile("|".join(re.escape(word) for word in words), re.IGNORECASE)
    said = clauses(source)
    theirs = [clause for clause in said if pattern.search(clause)]
    own = [clause for clause in said if _OWN_CLAUSE.match(clause) and not pattern.search(clause)]
    if not theirs or not own:
        return []
    stated = memory_terms(fact) - _FRAMING - memory_terms(" ".join(words))
    of_them = stated & memory_terms(" ".join(theirs))
    of_the_speaker = (stated & memory_terms(" ".join(own))) - of_them
    if len(of_the_speaker) >= _LEAST and len(of_the_speaker) > len(of_them):
        return sorted({found.group() for found in pattern.finditer(fact)})
    return []


# The speaker in a turn: 我, I, me, my, we … A turn without any speaks only of others.
_FIRST_PERSON = lazy_pattern(r"我|咱|\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|our|ours|us)\b", re.I)
_USER_OPENING = lazy_pattern(r"^\s*(?:用户的?|(?:the\s+)?user(?:'s)?\s+)", re.I)


def given_to_the_user(fact: str, source: str) -> list[str]:
    """The name ``source`` opens with when ``fact`` says of the user what that turn, which never speaks of its speaker,
    says of the one it names: "Dana owns the payments API now; Sam moved to the search team." became "User owns the
    payments API now", and it closed the user's own "User owns the checkout service" (the decision set's
    third-named-person); "朵朵今天开始上小学了，学校是上海市实验小学。" became "用户的学校是上海市实验小学" (a user
    trial). A clause without a subject of its own goes on about the one the turn opened with. A fact that names that
    one ("用户朵朵今天开始上小学了", "User's colleague Dana …") is theirs, and is left alone. A turn may open with she
    or he instead, after a short answer: "Yes please. 她不吃鸡蛋，也不吃洋葱大蒜。" (the mother, named in the turn
    before) became "用户请求助手调整菜单，因为不吃鸡蛋、洋葱和大蒜" (another trial), mixed with the assistant's words,
    so two words of the turn are enough there."""
    opening = _USER_OPENING.match(fact)
    if opening is None or _FIRST_PERSON.search(source):
        return []
    by_name = opening_name(source)
    pronoun = None if by_name else _OPENING_PRONOUN.match(source)
    if pronoun and not _THE_USER_ALONE.match(fact):  # "用户的妈妈不吃鸡蛋", "用户的妹妹叫林小雨" say whom it is
        return []
    named = by_name or (pronoun.group("who") if pronoun else None)
    if named is None or named.casefold() in fact.casefold():
        return []
    stated = memory_terms(fact[opening.end() :]) - _FRAMING
    said = memory_terms(source.replace(named, " "))
    restated = len(stated & said)
    enough = _LEAST if pronoun else max(_LEAST, _SHARE * len(stated))
    return [named] if restated >= enough else []


# A fact of the user alone, not of someone of theirs ("用户的妈妈…", "User's sister …").
_THE_USER_ALONE = lazy_pattern(r"^\s*(?:用户(?!的)|(?:the\s+)?user\s)", re.I)


# She or he opening a turn, after a short sentence at most ("Yes please."), and not reporting what was said of the
# user ("He said the rent is 6800" may well be the user's rent).
_OPENING_PRONOUN = lazy_pattern(
    r"^\s*(?:[^。！？.!?]{1,12}[。！？.!?]\s*)?(?P<who>她|他|(?-i:[Ss]he|[Hh]e)\b)(?!\s*(?:说|告诉|讲|觉得|认为|said|says|told|thinks))"
)
