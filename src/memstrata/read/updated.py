"""A raw turn whose fact the write path has since updated answers a question about now after the update.

A user trial: "我每天早上喝两杯咖啡，不喝咖啡没法上班。" said in December, and in June "Doctor told me to cut down
caffeine, so I switched to green tea in the mornings": the model replaced the coffee fact by "User switched to green
tea in the mornings" (an UPDATE). "我早上喝什么？" found the December turn first on its words (0.56) and the update,
in English, on its meaning (0.14); newer-first compares words, so it could not tie the two across languages. The write
path has already said which statement replaced what the turn said: an update keeps the turns of the versions it
replaced in its provenance, and its history names the version it superseded. So the update comes before the turn,
where that version is one the turn said and about what the question asks.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.lifecycle.decay import said_at
from memstrata.query import SearchQuery
from memstrata.read.move_up import in_place_of
from memstrata.read.newer import FOLLOWED, REPLACING_EVIDENCE, asked_of
from memstrata.storage.protocol import Store
from memstrata.types import MemoryItem, SearchHit


def with_the_updates_of_turns(
    store: Store, query: SearchQuery, hits: Sequence[SearchHit], below: Sequence[SearchHit], asked: str
) -> list[SearchHit]:
    """Each of the first ``FOLLOWED`` hits that is a raw turn preceded by the latest update of a fact that turn said,
    from lower in the list or below the cutoff, with its place and score; the update needs a fifth of the turn's
    relevance (``REPLACING_EVIDENCE``), as a correction does, and the fact it replaced must be about what the question
    asks ("Am I vegetarian?" is not answered by the move that replaced "User lives in Chengdu" of the same turn)."""
    ordered, spare = list(hits), list(below)
    updates = [hit for hit in [*ordered, *spare] if _may_update(hit.memory)]
    if not updates:
        return ordered
    position = 0
    while position < min(FOLLOWED, len(ordered)):
        turn = ordered[position]
        position += 1
        if turn.memory.kind != "episode":
            continue
        later = [
            hit
            for hit in updates
            if hit in ordered[position:] or hit in spare
            if hit.breakdown.relevance >= REPLACING_EVIDENCE * turn.breakdown.relevance
            and _updates_the_turn(store, query, hit.memory, turn.memory, asked)
        ]
        if later:
            chosen = max(later, key=lambda hit: said_at(hit.memory))
            (spare if chosen in spare else ordered).remove(chosen)
            ordered.insert(position - 1, in_place_of(chosen, turn))
            position += 1
    return ordered


def _may_update(item: MemoryItem) -> bool:
    """A fact that carries the turns of versions it replaced: more turns than its own."""
    return item.kind != "episode" and item.key is None and len(item.provenance.message_ids) > 1


def _updates_the_turn(store: Store, query: SearchQuery, update: MemoryItem, turn: MemoryItem, asked: str) -> bool:
    said = set(turn.provenance.message_ids)
    if not said & set(update.provenance.message_ids) or said_at(update) <= said_at(turn):
        return False
    events = [event for event in store.history(query.scope, update.id) if event.memory_id == update.id]
    replaced = next((e.details["supersedes"] for e in events if isinstance(e.details.get("supersedes"), str)), None)
    version = store.get(query.scope, [replaced]) if replaced else []
    return bool(version) and bool(said & set(version[0].provenance.message_ids)) and asked_of(version[0], asked)
