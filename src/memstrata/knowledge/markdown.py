"""Reading the structure of a Markdown document: its headings, and the heading path at any offset."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from memstrata.patterns import lazy_pattern

_ATX = lazy_pattern(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = lazy_pattern(r"^(```|~~~)")


@dataclass(frozen=True)
class Heading:
    offset: int  # where the heading line starts
    level: int
    title: str


def headings(markdown: str) -> list[Heading]:
    """ATX headings (``# Title``) outside fenced code blocks, in document order."""
    found: list[Heading] = []
    in_fence = False
    offset = 0
    for line in markdown.splitlines(keepends=True):
        stripped = line.rstrip("\r\n")
        if _FENCE.match(stripped):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX.match(stripped)):
            found.append(Heading(offset, len(match.group(1)), match.group(2).strip()))
        offset += len(line)
    return found


class HeadingIndex:
    """The headings in force at any character offset: ``path_at(i)`` is the chain of titles above i."""

    def __init__(self, markdown: str) -> None:
        self.headings = headings(markdown)
        self._offsets = [heading.offset for heading in self.headings]
        self._paths: list[tuple[str, ...]] = []
        stack: list[Heading] = []
        for heading in self.headings:
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            stack.append(heading)
            self._paths.append(tuple(h.title for h in stack))

    def path_at(self, offset: int) -> tuple[str, ...]:
        position = bisect.bisect_right(self._offsets, offset) - 1
        return self._paths[position] if position >= 0 else ()
