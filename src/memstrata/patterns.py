"""Regular expressions compiled when first used, not when their module is imported.

The text rules of both paths are ~730 regular expressions written at module level. Compiling them all was a third
of every process's start-up (~0.4 s of each CLI call, measured), while a search uses ~150 of them, an `add` ~90 and
`stats` ~26. :func:`lazy_pattern` is ``re.compile`` deferred: the first call of a method compiles the pattern and
binds the compiled pattern's own methods onto the object, so every later call costs what a compiled pattern's does.
"""

from __future__ import annotations

import re
import weakref
from typing import Any, cast

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")
_MADE: weakref.WeakSet[LazyPattern] = weakref.WeakSet()  # for compile_all


def _deferred(name: str) -> Any:
    """A method that compiles the pattern, then calls the compiled pattern's method of that name."""

    def method(self: LazyPattern, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._compile(), name)(*args, **kwargs)

    method.__name__ = name
    return method


class LazyPattern:
    """Quacks as the ``re.Pattern`` it will compile to; ``pattern`` is there before it is compiled."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        _MADE.add(self)

    def _compile(self) -> re.Pattern[str]:
        compiled = re.compile(self.pattern, self._flags)
        for name in _METHODS:  # instance attributes shadow the class's deferred methods from now on
            setattr(self, name, getattr(compiled, name))
        self._compiled = compiled
        return compiled

    def __getattr__(self, name: str) -> Any:  # flags, groups, groupindex: only what is not set on the object
        if name.startswith("__") or name == "_compiled":
            raise AttributeError(name)
        return getattr(self.__dict__.get("_compiled") or self._compile(), name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r}, {self._flags})"


for _name in _METHODS:
    setattr(LazyPattern, _name, _deferred(_name))


def lazy_pattern(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled on first use. Typed as the pattern it stands for: it answers every
    method and attribute of one (``tests/test_patterns.py``)."""
    return cast("re.Pattern[str]", LazyPattern(pattern, int(flags)))


def compile_all() -> int:
    """Compile every pattern made so far (by the modules imported): a server does at start what a short-lived
    process defers, so no request pays for it. How many were compiled now."""
    waiting = [pattern for pattern in list(_MADE) if "_compiled" not in pattern.__dict__]
    for pattern in waiting:
        pattern._compile()
    return len(waiting)
