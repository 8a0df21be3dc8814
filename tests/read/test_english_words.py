"""The compact English word list answers as pyspellchecker's SpellChecker does (membership, counts, one-edit
candidates and the words they hold), on real typos and on words of every kind the list has."""

from __future__ import annotations

import random

import pytest
from spellchecker import SpellChecker

from memstrata.read.english_words import english_words

TYPOS = ["adress", "wrok", "currntly", "whats", "freind", "teh", "recieve", "beleive", "cafe", "naive", "dont",
         "sistr", "bytedance", "Adress", "x", "'", "12", "1e5", "nan", "a" * 60, "", "résumé", "colour"]  # fmt: skip


@pytest.fixture(scope="module")
def reference() -> SpellChecker:
    return SpellChecker(language="en", distance=1)


def test_counts_and_membership_are_pyspellcheckers(reference: SpellChecker) -> None:
    words = english_words()
    listed = sorted(reference.word_frequency.dictionary)
    sample = [*random.Random(7).sample(listed, 3000), *TYPOS, *(word.upper() for word in listed[:50])]
    sample += [max(listed, key=len), min(listed, key=len)]
    for word in sample:
        expected = reference.word_frequency[word] if word in reference else 0
        assert (word in words, words.frequency(word)) == (word in reference, expected), word
    assert words.frequency("the") > 10_000 and words.frequency("yvonne") < 10_000


def test_one_edit_candidates_are_pyspellcheckers(reference: SpellChecker) -> None:
    words = english_words()
    listed = sorted(reference.word_frequency.dictionary)
    sample = [*TYPOS, *random.Random(11).sample(listed, 200)]
    for word in sample:
        assert words.one_edit(word) == reference.edit_distance_1(word), word
        assert words.known(words.one_edit(word)) == reference.known(reference.edit_distance_1(word)), word
    assert "address" in words.known(words.one_edit("adress"))
