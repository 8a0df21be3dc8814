"""pyspellchecker's English word list (160k words and how often English writes each), held compactly.

Spelling correction (read/spelling.py) and the tests for a common word (read/endings.py, read/own_first.py,
deep/profile.py) read the word list pyspellchecker ships. Its ``SpellChecker`` keeps it as a dict of Python strings:
36 MB of a process that loads it (measured alone; 8.4 MB this way). Here the same words are one sorted array of their
hashes with their UTF-8 bytes and counts beside them (5 MB of arrays), and the one-edit candidates of a word are
looked up in one call. What it answers is pyspellchecker's: the same lower-cased counts
(words differing only in case summed), the same letters for edits, the same words left unchecked (numbers, words far
longer than any in the list); ``tests/read/test_english_words.py`` compares the two.
"""

from __future__ import annotations

import gzip
import json
import pkgutil
import string
import threading
from collections import Counter
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from memstrata.storage.heap import release_free_heap

_LOAD = threading.Lock()
_loaded: EnglishWords | None = None


class EnglishWords:
    def __init__(self, counts: dict[str, int]) -> None:
        # by str hash (stable within a process, which is where the arrays live), the words' bytes beside to check
        ordered = sorted(counts, key=hash)
        self._hashes = np.array([hash(word) for word in ordered], dtype=np.int64)
        encoded = [word.encode() for word in ordered]
        self._ends = np.cumsum([len(raw) for raw in encoded], dtype=np.int64)
        self._bytes = b"".join(encoded)
        self._counts = np.array([counts[word] for word in ordered], dtype=np.int64)
        self._longest = max(map(len, counts), default=0)
        self._letters = "".join(sorted(set().union(*counts)))  # as pyspellchecker's: every character of a word

    def frequency(self, word: str) -> int:
        """How often English writes ``word`` (any case); 0 for a word not in the list."""
        found = self._lookup([word.lower()])
        return int(found[0])

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.frequency(word) > 0

    def known(self, candidates: Iterable[str]) -> set[str]:
        """Those of ``candidates`` (lower-cased) in the list: pyspellchecker's ``known``."""
        lowered = list({word.lower() for word in candidates})
        found = zip(lowered, self._lookup(lowered).tolist(), strict=True)
        return {word for word, count in found if count > 0 and _checkable(word, self._longest)}

    def one_edit(self, word: str) -> set[str]:
        """Every string one edit from ``word`` (a letter dropped, two swapped, one changed or added, of the letters
        the list's words hold): pyspellchecker's ``edit_distance_1``."""
        word = word.lower()
        if not _checkable(word, self._longest):
            return {word}
        splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
        deletes = [left + right[1:] for left, right in splits if right]
        transposes = [left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1]
        replaces = [left + letter + right[1:] for left, right in splits if right for letter in self._letters]
        inserts = [left + letter + right for left, right in splits for letter in self._letters]
        return set(deletes + transposes + replaces + inserts)

    def _lookup(self, words: list[str]) -> npt.NDArray[np.int64]:
        """The count of each of ``words`` (0 when absent)."""
        counts = np.zeros(len(words), dtype=np.int64)
        if not words or not self._hashes.size:
            return counts
        wanted = np.fromiter(map(hash, words), dtype=np.int64, count=len(words))
        at = np.minimum(np.searchsorted(self._hashes, wanted), self._hashes.size - 1)
        for i in np.flatnonzero(self._hashes[at] == wanted).tolist():  # mostly the words themselves
            raw, slot = words[i].encode(), int(at[i])
            while slot < self._hashes.size and self._hashes[slot] == wanted[i]:  # a shared hash: check the bytes
                start = int(self._ends[slot - 1]) if slot else 0
                if self._bytes[start : int(self._ends[slot])] == raw:
                    counts[i] = self._counts[slot]
                    break
                slot += 1
        return counts


def _checkable(word: str, longest: int) -> bool:
    """pyspellchecker's ``_check_if_should_check``: punctuation, numbers and words far too long are no words."""
    if len(word) == 1 and word in string.punctuation:
        return False
    if len(word) > longest + 3:
        return False
    if word in ("nan", "inf", "infinity"):
        return True
    try:
        float(word)
    except ValueError:
        return True
    return False


def _counts() -> dict[str, int]:
    raw = pkgutil.get_data("spellchecker", "resources/en.json.gz")
    if raw is None:
        raise RuntimeError("pyspellchecker's English word list is missing: reinstall memstrata's dependencies")
    lowered: Counter[str] = Counter()
    for word, count in json.loads(gzip.decompress(raw).decode("utf-8")).items():
        lowered[word.lower()] += count  # as pyspellchecker loads it, not case sensitive
    return dict(lowered)


def english_words() -> EnglishWords:
    """The list, loaded once per process (~0.2 s). Loading it reads the whole list as Python strings first: the heap
    they held is handed back (20 MB more of a process's memory otherwise, measured)."""
    global _loaded
    with _LOAD:
        if _loaded is None:
            _loaded = EnglishWords(_counts())
            release_free_heap()
        return _loaded
