"""A cache for a pure function of a text that can also be told a result computed earlier.

The word tables' readings of a memory's text (its categories, the questions it answers, the changes it states)
cost ~150 µs a text, and a search reads ~50 candidates it may never have seen in this process. They are
computed once when the memory is written and kept with its row (:mod:`memstrata.stored_words`). Reading a row
leaves its stored record here (:func:`keep_stored`, a dict entry: an export reads a million rows and ranks none);
the first reading asked of that text unpacks the record into every reading's cache, so the search finds them as if
computed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, update_wrapper
from typing import Any

_SIZE = 65_536
_PRIMED = 8_192  # a search reads its rows just before it ranks them, so a few searches' worth is enough
_pending: dict[str, str] = {}  # text -> the record stored with its row, not unpacked yet
_unpack: Callable[[str, str], None] | None = None  # primes the readings of a text from its record (stored_words.py)


def keep_stored(text: str, record: str) -> None:
    """The readings stored with a row of ``text``, to be unpacked if one is asked for; emptied when full (a record
    dropped costs its readings' computation)."""
    if len(_pending) >= _PRIMED:
        _pending.clear()
    _pending[text] = record


def unpack_stored_with(unpack: Callable[[str, str], None]) -> None:
    global _unpack
    _unpack = unpack


class TextCache:
    """``function(text)``, each result kept (least recently used out, as ``lru_cache``), or the result
    :meth:`prime` was told. Only a result ``function`` itself would give may be primed: the stored readings are
    tagged with the version of the tables and the text they read (see stored_words.py)."""

    def __init__(self, function: Callable[[str], str]) -> None:
        self._computed = lru_cache(maxsize=_SIZE)(function)
        self._primed: dict[str, str] = {}  # emptied when full; a reading cleared meanwhile is computed
        update_wrapper(self, function)

    def __call__(self, text: str) -> str:
        found = self._primed.get(text)
        if found is None:
            record = _pending.pop(text, None)
            if record is not None and _unpack is not None:
                _unpack(text, record)
                found = self._primed.get(text)
        return self._computed(text) if found is None else found

    def prime(self, text: str, result: str) -> None:
        if len(self._primed) >= _PRIMED:
            self._primed.clear()
        self._primed[text] = result

    def cache_info(self) -> Any:
        """The computed results' ``lru_cache`` statistics (a miss is a computation)."""
        return self._computed.cache_info()

    def cache_clear(self) -> None:
        self._computed.cache_clear()
        self._primed.clear()
        _pending.clear()


def text_cache(function: Callable[[str], str]) -> TextCache:
    """Decorator: ``function`` as a :class:`TextCache`."""
    return TextCache(function)
