"""A cache for a pure function of a text that can also be told a result computed earlier.

The word tables' readings of a memory's text (its categories, the questions it answers, the changes it states)
cost ~150 µs a text, and a search reads ~50 candidates it may never have seen in this process. They are
computed once when the memory is written and kept with its row (:mod:`memstrata.stored_words`); reading the
row primes these caches, so the search finds them as if computed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, update_wrapper

_SIZE = 65_536
_PRIMED = 8_192


class TextCache:
    """``function(text)``, each result kept (least recently used out, as ``lru_cache``), or the result
    :meth:`prime` was told. Only a result ``function`` itself would give may be primed: the stored readings are
    tagged with the version of the tables and the text they read (see stored_words.py)."""

    def __init__(self, function: Callable[[str], str]) -> None:
        self._computed = lru_cache(maxsize=_SIZE)(function)
        # a plain dict, emptied when full: a search primes its rows just before it reads them, so a few searches
        # worth is enough, and a reading cleared meanwhile is computed
        self._primed: dict[str, str] = {}
        update_wrapper(self, function)

    def __call__(self, text: str) -> str:
        found = self._primed.get(text)
        return self._computed(text) if found is None else found

    def prime(self, text: str, result: str) -> None:
        if len(self._primed) >= _PRIMED:
            self._primed.clear()
        self._primed[text] = result

    def primed(self, text: str) -> str | None:
        """The result primed for ``text``, if any."""
        return self._primed.get(text)

    def cache_clear(self) -> None:
        self._computed.cache_clear()
        self._primed.clear()


def text_cache(function: Callable[[str], str]) -> TextCache:
    """Decorator: ``function`` as a :class:`TextCache`."""
    return TextCache(function)
