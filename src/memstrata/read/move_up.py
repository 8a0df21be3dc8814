"""Moving a hit up the top of the list in place of one above it that it answers instead of (read/newer.py: a later
statement; read/own_first.py: the user's own statement). The hit moved takes the score of the one it passes, so
scores still fall down the list; only the top ``WINDOW``, where the answer is read, is reordered."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memstrata.types import SearchHit

WINDOW = 10


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
            ordered.insert(position, chosen.model_copy(update={"score": above.score}))
    return ordered
