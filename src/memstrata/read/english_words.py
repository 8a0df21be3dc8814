"""pyspellchecker's English word list (160k words and how often English writes each), held compactly.

Spelling correction (read/spelling.py) and the tests for a common word (read/endings.py, read/whose.py,
deep/profile.py) read the word list pyspellchecker ships. Its ``SpellChecker`` keeps it as a dict of Python strings:
36 MB of a process that loads it. Here the same words are one sorted array of their UTF-8 bytes with their counts
beside (8 MB), and the one-edit candidates of a word are looked up in one binary search. What it answers is
pyspellchecker's: the same lower-cased counts (words differing only in case summed), the same letters for edits,
the same words left unchecked (numbers, words far longer than any in the list); ``tests/read/test_english_words.py``
compares the two.

Reading the list as pyspellchecker ships it (gzipped JSON, then lower-cased and summed) took 0.5 s of the first
search of every process: each CLI ``search``. The arrays are kept in the user cache directory instead
(:mod:`memstrata.file_cache`) and read back in milliseconds.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import logging
import pkgutil
import string
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memstrata.file_cache import default_cache_dir, remove_older, write_atomically
from memstrata.storage.heap import release_free_heap

logger = logging.getLogger(__name__)
_LOAD = threading.Lock()
_loaded: EnglishWords | None = None
_CACHE_FORMAT = 1  # the arrays' layout below; a new layout derives the file again
_PATTERN = "english-words-*.npz"


class EnglishWords:
    def __init__(self, words: npt.NDArray[np.bytes_], counts: npt.NDArray[np.int64], letters: str, longest: int):
        """``words``: lower-cased UTF-8, sorted, with their ``counts`` beside; ``letters``: every character of a
        word, which edits try; ``longest``: the longest word's length in characters."""
        self._words, self._counts, self._letters, self._longest = words, counts, letters, longest

    @classmethod
    def from_counts(cls, counts: dict[str, int]) -> EnglishWords:
        ordered = sorted(counts, key=str.encode)  # byte order, the order numpy compares them in
        words = np.array([word.encode() for word in ordered], dtype=np.bytes_)
        letters = "".join(sorted(set().union(*counts)))  # as pyspellchecker's: every character of a word
        return cls(words, np.array([counts[word] for word in ordered], dtype=np.int64), letters,
                   max(map(len, counts), default=0))  # fmt: skip

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]]) -> EnglishWords:
        """What :meth:`arrays` gave (read back from a cache file)."""
        return cls(arrays["words"], arrays["counts"], str(arrays["letters"]), int(arrays["longest"]))

    def arrays(self) -> dict[str, Any]:
        return {"words": self._words, "counts": self._counts, "letters": np.array(self._letters),
                "longest": np.array(self._longest)}  # fmt: skip

    def frequency(self, word: str) -> int:
        """How often English writes ``word`` (any case); 0 for a word not in the list."""
        found = self._lookup([word.lower()])
        return int(found[0])

    def frequencies(self, words: Sequence[str]) -> list[int]:
        """:meth:`frequency` of each of ``words``, looked up at once."""
        return [int(count) for count in self._lookup([word.lower() for word in words])] if words else []

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
        width = self._words.dtype.itemsize
        # numpy's fixed-width bytes would cut a longer word and drop trailing NULs: neither can be in the list
        fits = [i for i, word in enumerate(words) if len(raw := word.encode()) <= width and b"\0" not in raw]
        if not fits or not self._words.size:
            return counts
        wanted = np.array([words[i].encode() for i in fits], dtype=self._words.dtype)
        at = np.minimum(np.searchsorted(self._words, wanted), self._words.size - 1)
        found = self._words[at] == wanted
        counts[np.asarray(fits)[found]] = self._counts[at[found]]
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


def _cached(cache_dir: Path) -> EnglishWords:
    version = importlib.metadata.version("pyspellchecker")
    path = cache_dir / _PATTERN.replace("*", f"{version}-{_CACHE_FORMAT}")
    try:
        with np.load(path, allow_pickle=False) as arrays:
            return EnglishWords.from_arrays(arrays)
    except FileNotFoundError:
        pass
    except Exception as exc:  # a damaged or foreign file: derive the list again and replace it
        logger.warning("ignoring the cached English word list %s (%s); reading pyspellchecker's", path, exc)
    words = EnglishWords.from_counts(_counts())
    release_free_heap()  # the list read as Python strings first: 20 MB more of a process otherwise (measured)
    if write_atomically(path, lambda out: np.savez(out, **words.arrays()), what="the English word list"):
        remove_older(path, _PATTERN)
    return words


def english_words(cache_dir: Path | None = None) -> EnglishWords:
    """The list, loaded once per process: from ``cache_dir`` (default: the user cache directory) where an earlier
    process left it, else from pyspellchecker's file (~0.5 s) and cached there."""
    global _loaded
    with _LOAD:
        if _loaded is None:
            _loaded = _cached(cache_dir or default_cache_dir())
        return _loaded
