"""Reading a model's JSON while it is written: spot a loop early, and keep the whole items of an answer cut off.

A small model at temperature 0 can fall into a loop ("用户和 Mark 的关系是 colleague_of / reports_to / …" over and
over) until its token limit: on 2 cores that is 100+ s per attempt, and every attempt loops the same way. Items of a
list are the unit both jobs work on: an item written a third time is a loop, and an answer cut off (by the loop
watch or by max_tokens) still holds every item it finished.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

_CLOSERS = {"{": "}", "[": "]"}
# An item seen this many times is a loop; so are this many different items each seen twice (a cycle of items).
_SAME_ITEM_LIMIT = 3
_REPEATED_ITEMS_LIMIT = 3


@dataclass
class JsonItems:
    """Scans JSON text as it grows and notes each finished item of a list (an object or a list inside a list).

    ``end_of_last_item`` and ``open_at_last_item`` say where the text could be cut and closed again; ``loop_start``
    is where a looping run of items began (the first time its first repeated item was written), or None.
    """

    text: str = ""
    end_of_last_item: int = 0
    open_at_last_item: tuple[str, ...] = ()
    loop_start: int | None = None
    _stack: list[tuple[str, int]] = field(default_factory=list)
    _in_string: bool = False
    _escaped: bool = False
    _first_seen: dict[str, int] = field(default_factory=dict)
    _times: dict[str, int] = field(default_factory=dict)

    def feed(self, chunk: str) -> None:
        start = len(self.text)
        self.text += chunk
        for offset, ch in enumerate(chunk):
            self._step(start + offset, ch)

    @property
    def looping(self) -> bool:
        return self.loop_start is not None

    def _step(self, index: int, ch: str) -> None:
        if self._in_string:
            if self._escaped:
                self._escaped = False
            elif ch == "\\":
                self._escaped = True
            elif ch == '"':
                self._in_string = False
        elif ch == '"':
            self._in_string = True
        elif ch in _CLOSERS:
            self._stack.append((ch, index))
        elif ch in "}]" and self._stack:
            _, begin = self._stack.pop()
            if self._stack and self._stack[-1][0] == "[":
                self._item(begin, index + 1)

    def _item(self, begin: int, end: int) -> None:
        self.end_of_last_item = end
        self.open_at_last_item = tuple(opener for opener, _ in self._stack)
        if self.loop_start is not None:
            return
        try:  # the same item however it is spaced
            key = json.dumps(json.loads(self.text[begin:end]), ensure_ascii=False, sort_keys=True)
        except json.JSONDecodeError:
            return
        self._first_seen.setdefault(key, begin)
        self._times[key] = self._times.get(key, 0) + 1
        repeated = [seen for seen, times in self._times.items() if times > 1]
        if self._times[key] >= _SAME_ITEM_LIMIT or len(repeated) >= _REPEATED_ITEMS_LIMIT:
            self.loop_start = min(self._first_seen[seen] for seen in repeated)


def whole_items(text: str) -> str | None:
    """``text`` cut after its last finished list item and closed, or None when it finished no item.

    A looping answer is cut before the loop began: what it repeats is not trusted, not even its first copy.
    """
    items = JsonItems()
    items.feed(text)
    if items.loop_start is not None:
        before_loop = items.loop_start
        items = JsonItems()
        items.feed(text[:before_loop])
    if not items.end_of_last_item:
        return None
    kept = items.text[: items.end_of_last_item]
    return kept + "".join(_CLOSERS[opener] for opener in reversed(items.open_at_last_item))
