"""Facts that give a relative what their turn says of the speaker.

The bundled 1.5B model, given "我儿子豆豆在星光幼儿园上中班，我每天吃一片优甲乐100微克。", wrote
"用户的儿子豆豆每天吃一片优甲乐100微克": the mother's medicine stored as her son's, with confidence 0.9 (a user
trial). A fact about a relative whose words come from a clause the speaker says of themselves ("我每天吃…", "I take
…") rather than from the clauses that name the relative is read as given to the wrong person: extraction asks once
more, and a fact that still does it waits for review as pending.

Kept narrow, as the other checks are: at least two of the fact's words must come from the speaker's own clause alone,
more than from the clauses naming the relative, so "我儿子豆豆每天吃一片钙片，我也吃" ("I take them too") is not
read so, and the same word in both counts for the relative.
"""

from __future__ import annotations

import re

from memstrata.modality import clauses
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import memory_terms
from memstrata.write.decide import relation_words, subject_of

# A clause the speaker says of themselves: opening with 我 / I, not with "我儿子", "我们", "my son".
_OWN_CLAUSE = lazy_pattern(
    r"^\s*(?:(?:而|但|可是|然后|and|but|so)\s*)?(?:我(?![们的]|家)|i\b(?!'s)|i'm\b|i've\b)", re.I
)
_FRAMING = frozenset({"用户", "user", "user's"})
_LEAST = 2  # of the fact's words, from the speaker's own clause alone


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
