"""A question about what held before now: "我以前在哪家公司？", "Where did I use to work?".

Search reads current memories, so when the write path had replaced "用户在杭州的网易做UI设计师" by "User started
working at Tencent in Shenzhen this week" (an UPDATE: the old version superseded), the question answered with
Tencent and found the old job only in its raw turn, third (a user trial). The versions a hit replaced are what
such a question asks for: they go right above it. A key the question names has its own way (the key's value before
its current one, read/pipeline.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.query import SearchQuery
from memstrata.read.move_up import WINDOW
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, SearchHit

_VERSIONS_BACK = 3  # replaced versions followed back from one hit: 以前 asks for the last ones, not the first job


def replaced_by(store: Store, query: SearchQuery, item: MemoryItem) -> list[MemoryItem]:
    """The versions ``item`` replaced, the latest first (an update records the version it supersedes)."""
    found: list[MemoryItem] = []
    current, seen = item.id, {item.id}
    while len(found) < _VERSIONS_BACK:
        events = [event for event in store.history(query.scope, current) if event.memory_id == current]
        older = next(
            (e.details.get("supersedes") for e in events if isinstance(e.details.get("supersedes"), str)), None
        )
        if older is None or older in seen:
            break
        seen.add(older)
        previous = store.get(query.scope, [older])
        if not previous:
            break
        found.append(previous[0])
        current = older
    return found


def with_what_they_replaced(store: Store, query: SearchQuery, hits: Sequence[SearchHit]) -> list[SearchHit]:
    """Each hit of the window that later steps reorder (``WINDOW``) preceded by the versions it replaced, the latest
    first. A key's value is left alone: its versions are read by key."""
    ordered: list[SearchHit] = []
    shown = {hit.memory.id for hit in hits}
    for position, hit in enumerate(hits):
        if position < WINDOW and hit.memory.key is None:
            for earlier in replaced_by(store, query, hit.memory):
                if earlier.id not in shown:
                    shown.add(earlier.id)
                    # found through the version that replaced it: that version's evidence and score
                    ordered.append(SearchHit(memory=earlier, score=hit.score, breakdown=hit.breakdown))
        ordered.append(hit)
    return ordered
