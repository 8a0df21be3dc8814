"""Moving a hit up the top of the list in place of one above it that it answers instead of (read/newer.py: a later
statement; read/own_first.py: the user's own statement). The hit moved takes the score of the one it passes, so
scores still fall down the list, and its breakdown says so (``final`` is the score, ``moved_from`` its own); only the
top ``WINDOW``, where the answer is read, is reordered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memstrata.answers import change_answers
from memstrata.indexing import states_for_the_user
from memstrata.modality import ends_or_corrects
from memstrata.types import SearchHit

WINDOW = 10
# A statement of change ("搬到上海浦东了", "Moved into our new place in Portland") says the state the hit above
# it describes no longer holds for the user: it answers instead from further below ("I live in Seattle" matches
# "Where do I live?" on its own words, 0.57 to 0.42; "我妹妹住在成都" leads "搬到上海浦东了" on the literal "住",
# 0.52 to 0.36).
CHANGE_MARGIN = 0.5


def within_reach(hit: SearchHit, above: SearchHit, margin: float) -> bool:
    """``hit`` scores within ``margin`` of ``above`` (within ``CHANGE_MARGIN`` for a statement of change, or one that
    ends or corrects what was said before, modality.ends_or_corrects)."""
    text = hit.memory.text
    changes = states_for_the_user(hit.memory) and (change_answers(text) or ends_or_corrects(text))
    return hit.score >= above.score * (1 - (CHANGE_MARGIN if changes else margin))


def move_up(
    hits: Sequence[SearchHit],
    answers_instead: Callable[[SearchHit, SearchHit], bool],
    best: Callable[[SearchHit], Any],
) -> list[SearchHit]:
    """At each place of the window, the ``best`` of the hits below it for which ``answers_instead(hit, above)``
    holds moves there."""
    ordered = list(hits)
    for position in range(min(WINDOW, len(ordered))):
        above = ordered[position]
        instead = [hit for hit in ordered[position + 1 : WINDOW] if answers_instead(hit, above)]
        if instead:
            chosen = max(instead, key=best)
            ordered.remove(chosen)
            ordered.insert(position, in_place_of(chosen, above))
    return ordered


def in_place_of(chosen: SearchHit, above: SearchHit) -> SearchHit:
    """``chosen`` with the score of ``above``, whose place it takes; its breakdown keeps its own score."""
    own = chosen.breakdown.final if chosen.breakdown.moved_from is None else chosen.breakdown.moved_from
    breakdown = chosen.breakdown.model_copy(update={"final": above.score, "moved_from": own})
    return chosen.model_copy(update={"score": above.score, "breakdown": breakdown})


def means_as_much(own: SearchHit, other: SearchHit) -> bool:
    """``own`` matches the question's meaning at least as well as ``other`` (the user's statement against another's,
    the user's turn against the reply to it): the other's lead is words both share with the question ("住" of
    "我妹妹住在成都" for "我住在哪里？", where "I live in Hangzhou" has meaning alone to show, across scripts)."""
    return (own.breakdown.dense_match or 0.0) >= (other.breakdown.dense_match or 0.0) > 0.0
