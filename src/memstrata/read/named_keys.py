"""Which key facts a question names by their words, not by the key itself: "which db engine?" names
``project:db:engine``, "我对什么过敏？" names ``用户:健康:过敏``, and "Where do I live?" names ``lin:home:city``
through the words people ask a home with (``indexing.ASKED_WITH``).

context() always includes a key fact its question names by the entity's words; search lifts every named one
(read/rank.rescore), so a structured fact is not buried by chatter that shares its words ("I live for the
weekend haha") or by log lines that all mention its topic ("HNSW ..." thirty times beside "HNSW M=32").
"""

from __future__ import annotations

import re

from memstrata.han import HAN_RANGES
from memstrata.indexing import ASKED_WITH
from memstrata.lexical import has_han
from memstrata.read.evidence import match_form

_KEY_WORDS = re.compile(r"[_\-.\s]+")
_LATIN_WORD = re.compile(rf"[^\W_{HAN_RANGES}]+")


def _query_forms(query: str) -> set[str]:
    return {match_form(word) for word in _LATIN_WORD.findall(query.lower())}  # Chinese runs into Latin words


def _has_words(query: str, part: str) -> bool:
    words = [word for word in _KEY_WORDS.split(part.lower()) if word]
    if not words or len("".join(words)) < 2:
        return False
    forms = _query_forms(query)
    return all(word in query.lower() if has_han(word) else match_form(word) in forms for word in words)


def names_key(query: str, key: str) -> bool:
    """A query names a key when it contains the key itself, or the words of its last part (the entity)."""
    return key.lower() in query.lower() or _has_words(query, key.rsplit(":", 1)[-1])


def asks_for_key(query: str, key: str) -> bool:
    """:func:`names_key`, or a word people ask one of the key's parts with ("live" for home, "上班" for employer)."""
    if names_key(query, key):
        return True
    forms, lowered = _query_forms(query), query.lower()
    asked = (word for part in key.lower().split(":") for word in ASKED_WITH.get(part, "").split())
    return any(word in lowered if has_han(word) else match_form(word) in forms for word in asked)
