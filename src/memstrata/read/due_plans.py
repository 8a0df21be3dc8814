"""A plan of change whose time has come reads as the change it planned.

"我下个月要搬到上海了" said in June 2024 is where the user lives from July: asked in 2026 "我现在住哪？", the plan
shared no word with the question and only the old home answered. The keyword index holds a plan with the words of
what it will answer once done (indexing.keyword_text), so it is found; ranking reads those words only once the time
the plan names has begun, so before then it counts for nothing more than its own words. From then on the user's
own plan (said in a first-person word) also answers before the state it changes, as a change said as done does
(read/newer.py, :func:`changes_by`); a later "没搬成" calls it off, and a question that names an earlier time reads
only changes said as done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, tzinfo

from memstrata.answers import change_answers, planned_change_answers, unquoted
from memstrata.indexing import states_for_the_user
from memstrata.read.rank import MemoryText
from memstrata.read.retrieve import time_it_names
from memstrata.read.whose import FIRST_PERSON
from memstrata.types import MemoryItem


def due_plan_answers(item: MemoryItem, now: datetime, zone: tzinfo) -> str:
    """The words of what the memory planned (answers.planned_change_answers) once the time it names has begun by
    ``now``, or ""."""
    words = planned_change_answers(item.text) if states_for_the_user(item) else ""
    if not words:
        return ""
    named = time_it_names(item, zone)
    # a fact the model dated holds its named time as event_time already (write/facts.py); a turn's is when it was said
    begins = named.start if named is not None else None if item.kind == "episode" else item.event_time
    return words if begins is not None and begins <= now else ""


def changes_by(now: datetime, zone: tzinfo) -> Callable[[MemoryItem], str]:
    """What a memory says has changed by ``now``, as the words of the questions it answers: a change said as done
    (answers.change_answers) or a plan whose time has begun. "Sophie is leaving 😢 From next month I report directly
    to the CTO, 胡建国", said in May 2025, is whom the user reports to in 2026, not the manager of 2023 whose "My
    manager is Sophie Wu" matches "Who is my boss?" on more of its words (read/newer.py)."""

    def changes(item: MemoryItem) -> str:
        said = unquoted(item.text)  # a change quoted is the quoted person's (answers.unquoted)
        # a plan replaces a state only where the user says it is theirs: "Adam starts at Clearwater Bay School next
        # week" (the son's) passed the user's job for "Where do I work now?" (a held-out trial)
        planned = due_plan_answers(item, now, zone) if FIRST_PERSON.search(said) else ""
        return " ".join(filter(None, (change_answers(said), planned)))

    return changes


def read_as_done(text: MemoryText, item: MemoryItem, now: datetime, zone: tzinfo) -> MemoryText:
    """``text`` with the words of what the memory planned, once the time it names has begun by ``now``."""
    words = due_plan_answers(item, now, zone)
    if not words:
        return text
    own_indexed = None if text.own_indexed is None else f"{text.own_indexed}\n{words}"
    said = text.own if text.said is None else text.said  # what the memory itself says, without the words added
    return replace(text, indexed=f"{text.indexed}\n{words}", own=f"{text.own}\n{words}", own_indexed=own_indexed,
                   said=said)  # fmt: skip
