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


def test_the_list_is_cached_and_read_back_the_same(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from memstrata.read import english_words as module

    built = module._cached(tmp_path)
    (cached,) = tmp_path.glob("english-words-*.npz")

    def no_reading() -> dict[str, int]:
        raise AssertionError("pyspellchecker's list was read again although the arrays were cached")

    monkeypatch.setattr(module, "_counts", no_reading)
    read_back = module._cached(tmp_path)
    for word in ["the", "adress", "résumé", "supercalifragilisticexpialidocious", "a" * 60, "", "12"]:
        assert read_back.frequency(word) == built.frequency(word), word
        assert read_back.known(read_back.one_edit(word)) == built.known(built.one_edit(word)), word

    cached.write_bytes(b"PK\x03\x04 not what it says")  # damaged: read past, derived again, replaced
    monkeypatch.undo()
    assert module._cached(tmp_path).frequency("address") == built.frequency("address") > 0
    assert cached.stat().st_size > 1_000_000
