"""The word tables' readings of a memory's text, computed when it is written and kept with its row.

Ranking reads four things of every candidate's text: the categories it names an instance of
(:func:`indexing.unsaid_category_words`), the questions it answers (:func:`answers.answer_words`), the change it
states and the change it plans (:func:`answers.change_answers`, :func:`answers.planned_change_answers`). Together
they cost ~150 µs a text (dozens of regular expressions, jieba), and a search of a large store reads ~50 candidates
this process has not read before: 8 of a 13 ms search at 100k memories. The write path stores them in
``memories.words``; reading the row keeps the record, and the first reading asked of the text unpacks it into the
functions' caches (:mod:`memstrata.text_cache`).

A reading is used only where it is the one the running code would compute: it is tagged with :data:`VERSION`
(the keyword terms' version and a fingerprint of the modules that compute it, so any change to a word table
leaves older readings unused) and the checksum of the text it read. Unused readings cost their computation,
nothing else; ``memstrata reindex`` writes them again (with the keyword index, see storage/sql/store.py).
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path
from types import ModuleType

from memstrata import answers, categories, employers, han, indexing, lexical, modality
from memstrata.han import simplified
from memstrata.text_cache import TextCache, keep_stored, unpack_stored_with

_READINGS: tuple[TextCache, ...] = (
    indexing.unsaid_category_words,
    answers.answer_words,
    answers.change_answers,
    answers.planned_change_answers,
)
_SEPARATOR = "\x1f"  # ASCII unit separator: never in the words the tables give


def _fingerprint(modules: tuple[ModuleType, ...]) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    for module in modules:
        source = Path(module.__file__) if module.__file__ else None
        digest.update(source.read_bytes() if source is not None and source.is_file() else module.__name__.encode())
    return digest.hexdigest()[:8]


# The modules the readings come from: an edit to any of them may change a reading.
VERSION = f"{lexical.SEARCH_TERMS_VERSION}.{_fingerprint((answers, categories, employers, han, indexing, modality))}"


def _tag(text: str) -> str:
    return f"{VERSION}:{zlib.crc32(text.encode()):08x}"


def stored_words(text: str) -> str:
    """What ``memories.words`` holds for a memory of ``text``: the tag, then each reading (most are "")."""
    read = simplified(text)  # as ranking reads it (indexing.as_simplified)
    return _SEPARATOR.join([_tag(read), *(reading(read) for reading in _READINGS)])


def remember(text: str, stored: str | None) -> None:
    """A row of ``text`` was read with ``stored``: kept until a reading of the text is asked for, then unpacked
    (:func:`memstrata.text_cache.keep_stored`). Ranking asks the readings of the Simplified text, so a record
    tagged for another text than the one written (a Traditional text's) is kept under its Simplified form; a record
    of other tables is not kept at all."""
    if not stored:
        return
    tag = stored.partition(_SEPARATOR)[0]
    if tag == _tag(text):  # the text reads as written: the common case, no conversion
        keep_stored(text, stored)
    elif tag.startswith(f"{VERSION}:"):
        read = simplified(text)
        if read != text:
            keep_stored(read, stored)  # _unpack checks the tag against the Simplified text


def _unpack(text: str, stored: str) -> None:
    """Prime each reading of ``text`` with what ``stored`` says, where this version stored it for this text."""
    tag, *words = stored.split(_SEPARATOR)
    if tag != _tag(text) or len(words) != len(_READINGS):
        return
    for reading, found in zip(_READINGS, words, strict=True):
        reading.prime(text, found)


unpack_stored_with(_unpack)
