"""Which key facts a question names by their words, not by the key itself: "which db engine?" names
``project:db:engine``, "我对什么过敏？" names ``用户:健康:过敏``, and "Where do I live?" names ``lin:home:city``
through the words people ask a home with (``indexing.ASKED_WITH``).

context() always includes a key fact its question names by the entity's words; search lifts every named one
(read/rank.rescore), so a structured fact is not buried by chatter that shares its words ("I live for the
weekend haha") or by log lines that all mention its topic ("HNSW ..." thirty times beside "HNSW M=32").
"""

from __future__ import annotations

from functools import lru_cache

from memstrata.han import HAN_RANGES
from memstrata.indexing import ASKED_WITH, asked_parts
from memstrata.lexical import has_han
from memstrata.patterns import lazy_pattern
from memstrata.read.evidence import match_form
from memstrata.read.whose import asks_about_the_user, asks_only_about_another

_KEY_WORDS = lazy_pattern(r"[_\-.\s]+")
_LATIN_WORD = lazy_pattern(rf"[^\W_{HAN_RANGES}]+")


@lru_cache(maxsize=4096)  # asked once per key among a search's candidates, several times each
def _query_forms(query: str) -> frozenset[str]:
    return frozenset(match_form(word) for word in _LATIN_WORD.findall(query.lower()))  # Chinese runs into Latin words


def _has_words(query: str, part: str) -> bool:
    words = [word for word in _KEY_WORDS.split(part.lower()) if word]
    if not words or len("".join(words)) < 2:
        return False
    forms = _query_forms(query)
    return all(word in query.lower() if has_han(word) else match_form(word) in forms for word in words)


def names_key(query: str, key: str) -> bool:
    """A query names a key when it contains the key itself, or the words of its last part (the entity)."""
    return key.lower() in query.lower() or _has_words(query, key.rsplit(":", 1)[-1])


def asks_for_key(query: str, key: str, owner: str | None = None) -> bool:
    """:func:`names_key`, or a word people ask one of the key's parts with ("live" for home, "上班" for employer).
    A personal key (a home, a job, a phone) answers only a question about its owner: in the first person and naming
    no one else, or naming the key's namespace or the ``owner`` (a user id) by name. "My mom lives in which city?"
    and "Where do koalas live?" named the user's ``home:city`` by "live" and "city", and lifted it above the mother's
    city."""
    if key.lower() in query.lower():
        return True
    asked = asked_parts(key)
    if not (_has_words(query, key.rsplit(":", 1)[-1]) or _asks_with(query, asked)):
        return False
    return not asked or asks_about_the_user(query) or _names_owner(query, key, owner)


def _asks_with(query: str, parts: tuple[str, ...]) -> bool:
    forms, lowered = _query_forms(query), query.lower()
    asked = (word for part in parts for word in ASKED_WITH[part].split())
    return any(word in lowered if has_han(word) else match_form(word) in forms for word in asked)


def _names_owner(query: str, key: str, owner: str | None) -> bool:
    """Whether the query names whom the key is about: a part of the key that is no attribute ("lin" of
    "lin:home:city", "mom" of "mom:home:city"), or the owner's user id."""
    parts = {word for part in key.lower().split(":")[:-1] for word in _KEY_WORDS.split(part) if word}
    names = (parts - ASKED_WITH.keys()) | ({owner.lower()} if owner else set())
    forms = _query_forms(query)
    return any(name in query.lower() if has_han(name) else match_form(name) in forms for name in names)


def answers_for_another(query: str, key: str, owner: str | None = None) -> bool:
    """Whether ``key`` is a personal key of its owner (a home, a job, a phone) and the query asks only about someone
    else: the user's ``home:city`` is no answer to "My mom lives in which city?", though "lives" and "city" are its
    words; it came first, above "我妈妈住在南京"."""
    return bool(asked_parts(key)) and asks_only_about_another(query) and not _names_owner(query, key, owner)
