"""Among hits that answer a question for the same reasons, the later statement first.

A user who said "my favourite food is sushi" in 2023 and "my favourite food is ramen" in 2024 means ramen now.
Both match the question on the same words, so their relevance is a near tie decided by noise, and lifecycle
decay cannot separate them when both lie long in the past (it is about 0 for each, most of all for imported
history). So a hit that matches the query on exactly the words a hit above it matches, was said later, and
scores within ``margin`` of it, moves above it (and takes its score, so scores still fall down the list).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memstrata.indexing import own_index_text
from memstrata.lexical import has_han
from memstrata.lifecycle.decay import said_at
from memstrata.read.evidence import memory_terms, query_terms
from memstrata.read.move_up import move_up, within_reach
from memstrata.types import MemoryItem, SearchHit

MARGIN = 0.2  # a later statement at most this share below the hit above it answers instead (read/move_up.py)


def newer_first(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    terms = _facets(query_terms(query_text))
    if not terms:
        return list(hits)

    def reasons(hit: SearchHit) -> frozenset[str]:
        return terms & _facets(memory_terms(_statement(hit.memory)))

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        why = reasons(above)
        return (
            bool(why)
            and not above.breakdown.key_match
            and said_at(hit.memory) > said_at(above.memory)
            and within_reach(hit, above, margin)
            and reasons(hit) == why
        )

    return move_up(hits, answers_instead, best=lambda hit: said_at(hit.memory))


def _statement(item: MemoryItem) -> str:
    """What a memory states, in the words it is indexed with: a statement of change with the words of the questions
    it answers ("I moved to Shanghai" answers where the user lives, indexing.change_answers), an episode with its
    speaker. A key fact by its value alone: it holds the key's current value, and chatter said later that shares
    the words its key is asked with ("I live for the weekend") must not take its place."""
    return item.text if item.key else own_index_text(item)


def _facets(terms: Iterable[str]) -> frozenset[str]:
    """Terms to compare two statements' reasons by: a Chinese word as its characters, since segmentation cuts the
    same words apart differently ("我超爱吃辣" holds "吃", "我不吃辣了" holds "不吃": "我能吃辣吗？" matched them for
    different reasons, and the older statement stayed first)."""
    return frozenset(part for term in terms for part in (term if has_han(term) else (term,)))
