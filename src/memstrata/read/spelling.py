"""Misspelt words in a question, read as the words the scope's memories hold ("whats my current adress").

A typo matched nothing: no memory holds "adress" or "wrok", so "whats my current adress" and "Where do I currntly
wrok?" got no hit at all. A word of the question that is neither an English word nor a word of any memory in the
scope (under the query's filters) is read as an English word one edit away (a letter added, dropped, changed, or two
swapped) that some memory of the scope holds, or one of its Chinese words (glossary.py), or that the categories and
relations are asked with ("sister", "address": they bridge to memories in Chinese): one with the same first letter
before one without, then the most common. A word no such correction exists for stays as typed.

Corrections are checked against the scope's own memories, never against a dictionary alone: pyspellchecker's word
list alone reads the cat "Mochi" as "mocha", "Mei" as "me" and "adress" as "dress". A word the scope holds is never
changed, and a capitalised word inside the sentence is taken for a name and left alone. Only one edit: two edits
cost 170-370 ms for a long unknown word ("bytedance") and mostly find other words. English only; Chinese is matched
by its characters and an IME does not misspell.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memstrata.categories import english_vocabulary
from memstrata.lexical import search_terms
from memstrata.patterns import lazy_pattern
from memstrata.query import SearchQuery
from memstrata.read.english_words import english_words
from memstrata.read.other_language import held, other_words
from memstrata.storage.protocol import Store

# Latin words of four letters or more, not part of a key, an address or a number ("u_12", "a.b", "x-ray" stay)
# (Chinese may touch it: "我的adress是什么")
# and no longer than a word (a pasted token of 5,000 letters took 0.34 s to try one edit on)
_WORD = lazy_pattern(r"(?<![A-Za-z0-9_.@:/'’-])[A-Za-z]{4,24}(?![A-Za-z0-9_.@:/-])")
_CANDIDATES = 8  # corrections tried per word, most common first: each is one keyword lookup in the scope
_UNKNOWN = 10  # unknown words looked up per query: a pasted text of 200 made-up words took 0.19 s

COMMON_WORD = 10_000  # a word at least this frequent in English text is a common word, not a name


def is_common_word(word: str) -> bool:
    """Whether English writes ``word`` often (at least ``COMMON_WORD`` in the dictionary's counts): "Number" in
    "Number's 720-555-0172 now" is no one's name; Yvonne (490) is."""
    return english_words().frequency(word) >= COMMON_WORD


def corrected_spelling(store: Store, query: SearchQuery, *, translated: bool = True) -> str:
    """``query.text`` with each misspelt word replaced by the scope's word it stands for (see the module);
    ``translated``: a word whose Chinese words the scope holds counts as held (``search.translate_words``)."""
    holds = _scope_holds(store, query, translated)
    words = english_words()
    sentence_start = re.match(r"\W*", query.text)
    first = sentence_start.end() if sentence_start else 0

    unknown = 0

    def read(match: re.Match[str]) -> str:
        nonlocal unknown
        word = match.group(0)
        if word[0].isupper() and match.start() != first:  # a name ("Feng", "Shopee")
            return word
        lower = word.lower()
        if lower in words or unknown >= _UNKNOWN:
            return word
        unknown += 1
        if holds(lower):
            return word
        # a typo seldom changes the first letter ("adress" is "address", not "dress"), then the commonest
        found = sorted(words.known(words.one_edit(lower)),
                       key=lambda known: (known[0] != lower[0], -words.frequency(known), known))  # fmt: skip
        found = found[:_CANDIDATES]
        if not found or not holds(*found):  # one lookup for all: mostly none of them is in the scope either
            return word
        fixed = next((known for known in found if holds(known)), lower)
        return word if fixed == lower else fixed.capitalize() if word[0].isupper() else fixed

    return _WORD.sub(read, query.text)


def _scope_holds(store: Store, query: SearchQuery, translated: bool) -> Callable[..., bool]:
    known = english_vocabulary()

    def holds(*words: str) -> bool:
        """Whether one of ``words`` is asked with a category or relation (their words bridge languages: "my sistr's
        job?" of a sister said to be 我妹妹), or some memory of the scope, under the query's filters, holds it, or
        (``translated``) one of its Chinese words: "Whats my reserch area" of "研究方向也转成…" is "research" (研究),
        which read/other_language.py then asks in Chinese too."""
        if any(word in known for word in words):
            return True
        terms = [term for word in words for term in search_terms(word)]
        if terms and store.keyword_search(query.scope, terms, query.filters, 1):
            return True
        return translated and any(held(store, query, chinese) for word in words for chinese in other_words(word))

    return holds
