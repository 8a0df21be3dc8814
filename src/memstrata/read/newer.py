"""Among hits that answer a question for the same reasons, the later statement first.

A user who said "my favourite food is sushi" in 2023 and "my favourite food is ramen" in 2024 means ramen now.
Both match the question on the same words, so their relevance is a near tie decided by noise, and lifecycle
decay cannot separate them when both lie long in the past (it is about 0 for each, most of all for imported
history). So a hit that matches the query on exactly the words a hit above it matches, was said later, and
scores within ``margin`` of it, moves above it (and takes its score, so scores still fall down the list).
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.indexing import own_index_text
from memstrata.lifecycle.decay import said_at
from memstrata.read.evidence import memory_terms, query_terms
from memstrata.types import MemoryItem, SearchHit

MARGIN = 0.2  # a later statement at most this share below the hit above it answers instead
WINDOW = 10  # the top of the list, where the answer is read


def newer_first(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    terms = frozenset(query_terms(query_text))
    ordered = list(hits)
    if not terms:
        return ordered
    for position in range(min(WINDOW, len(ordered))):
        above = ordered[position]
        reasons = terms & memory_terms(_statement(above.memory))
        if above.breakdown.key_match or not reasons:
            continue
        later = [
            hit
            for hit in ordered[position + 1 : WINDOW]
            if said_at(hit.memory) > said_at(above.memory)
            and hit.score >= above.score * (1 - margin)
            and terms & memory_terms(_statement(hit.memory)) == reasons
        ]
        if later:
            newest = max(later, key=lambda hit: said_at(hit.memory))
            ordered.remove(newest)
            ordered.insert(position, newest.model_copy(update={"score": above.score}))
    return ordered


def _statement(item: MemoryItem) -> str:
    """What a memory states, in the words it is indexed with: a statement of change with the words of the questions
    it answers ("I moved to Shanghai" answers where the user lives, indexing.change_answers), an episode with its
    speaker. A key fact by its value alone: it holds the key's current value, and chatter said later that shares
    the words its key is asked with ("I live for the weekend") must not take its place."""
    return item.text if item.key else own_index_text(item)
