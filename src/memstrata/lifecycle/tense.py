"""The tense of a sentence, for the times it names without saying which ("in March", "the weekend", "on
Saturday"): -1 past, 1 to come, 0 neither or both (lifecycle/timeparse.py)."""

from __future__ import annotations

import re

from memstrata.modality import PLAN
from memstrata.patterns import lazy_pattern

# Tense cues of the sentence around a month or day named without its year. Kept narrow on purpose: a cue that is not
# there leaves this year's reading, which is what every such date meant before. The future: the write path's plan
# words (modality.PLAN), and what else says a thing is still to come (bookings, 要 / 会 / 将 as auxiliaries).
_FUTURE_CUE = lazy_pattern(
    rf"{PLAN}|\b(?:shall|going\s+to|gonna|planned|intended|hope\s+to|want\s+to|would\s+like|booked|scheduled|"
    r"reserved|registered|signed\s+up|looking\s+forward)\b|'ll\b"
    r"|(?<![重主需只不])要|(?<![开机社大约])会(?!议)|将|预订|订了|报名",
    re.I,
)
_PAST_CUE = lazy_pattern(
    r"\b(?:was|were|did|had|went|(?<!'ve )(?<!have )got|came|left|spent|took|bought|made|met|saw|gave|began|flew|"
    r"drove|ran|ate|wrote)\b"  # "I've got" is "I have": no past
    r"|[去来到吃见做住玩学看用买试听读写回]过|(?<![为除算])了(?!解)",
    re.I,
)
# "I visited", "we finally moved": a regular past after its subject (not "I need", "they exceed")
_PAST_ED = lazy_pattern(
    r"\b(?:i|we|he|she|they)\s+(?:(?:just|also|really|finally|already|then|first)\s+)?(\w{2,}ed)\b", re.I
)
_NOT_PAST_ED = frozenset({"need", "feed", "speed", "embed", "exceed", "proceed", "succeed", "shed", "bleed", "breed"})


def sentence_tense(clause: str) -> int:
    """-1 past, 1 future, 0 neither or both."""
    past = bool(_PAST_CUE.search(clause)) or any(word.lower() not in _NOT_PAST_ED for word in _PAST_ED.findall(clause))
    future = bool(_FUTURE_CUE.search(clause))
    return 0 if past == future else -1 if past else 1


# "What am I doing on Saturday?", "I'm flying home over the weekend": the present progressive of an arrangement
_PROGRESSIVE = lazy_pattern(r"\b(?:am|are|is|i'm|we're|you're|he's|she's|they're)\s+(?:\w+\s+)?(\w{2,}ing)\b", re.I)
_NOT_PROGRESSIVE = frozenset(
    {"morning", "evening", "thing", "something", "nothing", "anything", "everything", "wedding", "meeting", "building",
     "spring", "king", "ring", "string", "wing"}
)  # fmt: skip


# "Is there a meeting on Monday?", "Do I have any plans on Saturday?", "I have a dentist appointment on Friday": one
# thing on the calendar (an article: "The gym is closed on Sunday" and "I have yoga on Saturdays" are habits)
_SCHEDULED = lazy_pattern(
    r"\b(?:is|are)\s+there\s+(?:a|an|any)\b|\b(?:do|does)\s+(?:i|we|you|he|she|they)\s+have\s+(?:a|an|any)\b"
    r"|\b(?:i|we)(?:\s+have|'ve\s+got)\s+(?:a|an)\b",
    re.I,
)


def arranged(clause: str) -> int:
    """:func:`sentence_tense`, with the present progressive and a thing scheduled as the future: beside a day of the
    week or the weekend they are an arrangement to come ("What am I doing on Saturday?", "Is there a meeting on
    Monday?"), not a habit ("What do I do on Saturdays?")."""
    tense = sentence_tense(clause)
    if tense != 0:
        return tense
    progressive = any(word.lower() not in _NOT_PROGRESSIVE for word in _PROGRESSIVE.findall(clause))
    return 1 if progressive or _SCHEDULED.search(clause) else 0
