"""A misspelt query word is read as the word the scope's memories hold (read/spelling.py), on every backend."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata import Memory
from memstrata.query import SearchQuery
from memstrata.read.spelling import corrected_spelling
from memstrata.types import Scope

FACTS = [
    "I moved to 42 Baker Street, that's my new address now",
    "I bought a red dress for the wedding",
    "I work at Shopee as a data engineer",
    "My cat Mochi loves tuna",
    "I'm allergic to peanuts",
    "Feng is my brother, he lives in Hangzhou",
]


@pytest.fixture
def remembered(memory: Memory) -> Memory:
    for fact in FACTS:
        memory.add(fact, user_id="alex")
    memory.add("My sister's address is 9 Elm Road", user_id="other")
    return memory


def _read(memory: Memory, text: str, user_id: str = "alex") -> str:
    query = SearchQuery(text=text, scope=Scope(user_id=user_id), now=datetime.now(UTC))
    return corrected_spelling(memory.store, query)


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("whats my current adress", "whats my current address"),  # "address" (same first letter), not "dress"
        ("Where do I currntly wrok?", "Where do I currntly work?"),  # no memory says "currently": left as typed
        ("what am I alergic to", "what am I allergic to"),
        ("where does my brothr live", "where does my brother live"),
        ("Alergic to what?", "Allergic to what?"),  # the first word may be capitalised
        ("Is Mochii fed?", "Is Mochii fed?"),  # a capitalised word inside the sentence is a name
        ("does mochi like tuna", "does mochi like tuna"),  # the scope holds it: never "mocha"
        ("lin:home:adress", "lin:home:adress"),  # part of a key
        ("我的adress是什么", "我的address是什么"),  # mixed with Chinese
        ("what is my zzzzqx", "what is my zzzzqx"),  # nothing one edit away in the scope
    ],
)
def test_a_misspelt_word_is_read_as_the_scopes_word(remembered: Memory, typed: str, read: str) -> None:
    assert _read(remembered, typed) == read


def test_corrections_come_from_the_scope_only(remembered: Memory) -> None:
    # "tuna" is held by alex's memory alone: the other user's question keeps the typo
    assert _read(remembered, "does the cat like tunaa") == "does the cat like tuna"
    assert _read(remembered, "does the cat like tunaa", user_id="other") == "does the cat like tunaa"


def test_the_words_categories_and_relations_are_asked_with_are_known_in_every_scope(remembered: Memory) -> None:
    """ "my sistr's job?" of a sister said to be 我妹妹: no memory says "sister" in English, yet the relation's words
    bridge the two languages (read/relatives.py)."""
    assert _read(remembered, "my sistr's job?") == "my sister's job?"
    assert _read(remembered, "whats my adress", user_id="nobody") == "whats my address"


def test_search_finds_the_answer_despite_typos(remembered: Memory) -> None:
    work = remembered.search("Where do I currntly wrok?", user_id="alex", limit=3)
    assert work and work[0].memory.text == "I work at Shopee as a data engineer"
    home = remembered.search("what is my adress", user_id="alex", limit=3)
    assert home and home[0].memory.text == FACTS[0]
    brother = remembered.search("where does my brothr live", user_id="alex", limit=3)
    assert brother and brother[0].memory.text == FACTS[5]


def test_long_tokens_and_long_pastes_are_bounded(remembered: Memory) -> None:
    """A pasted token of 5,000 letters took 0.34 s to try one edit on, and a text of 200 made-up words 0.19 s: a word
    is at most 24 letters, and 10 unknown words a query are looked up."""
    remembered.add("Our debate club argued about antidisestablishmentarianism", user_id="alex")
    assert _read(remembered, "antidisestablishmentarianizm") == "antidisestablishmentarianizm"  # 28 letters
    corrected = _read(remembered, " ".join(["adress"] * 12)).split()
    assert corrected == ["address"] * 10 + ["adress"] * 2
