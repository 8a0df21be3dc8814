"""A turn answers before a fact of it that left out the ending it said.

A user trial: "年糕昨天走了，15岁的老猫了……其实她是我从我奶奶那里接过来的。" (the cat died) gave the bundled model two
facts, "用户年糕昨天走了" and "用户的15岁的老猫是她从她奶奶那里接过来的". "Do I have a cat?" found the second first
(0.79): it names a cat and the first does not, and nothing in it says that she died. Later news could not help: the
fact names no one for an ending to end. The turn it came from says both, verbatim, so where a fact's one turn is
among the first hits and ends or corrects something (modality.ends_or_corrects) while the fact ends nothing, the turn
takes the fact's place, above it. Where the fact does keep the ending ("用户年糕昨天走了"), it stays first.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.indexing import states_for_the_user
from memstrata.modality import clauses, ends_or_corrects
from memstrata.read.move_up import in_place_of
from memstrata.read.newer import FOLLOWED
from memstrata.types import MemoryItem, SearchHit


def turns_before_what_they_left_out(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """Each of the first ``FOLLOWED`` hits that is a fact of one turn, ending nothing, preceded by that turn where the
    turn is also among them and ends or corrects something."""
    ordered = list(hits)
    for position in range(min(FOLLOWED, len(ordered))):
        fact = ordered[position]
        if not _one_turns_fact(fact.memory) or _ends_something(fact.memory.text):
            continue
        turn = next((hit for hit in ordered[position + 1 : FOLLOWED] if _said(hit.memory, fact.memory)), None)
        if turn is not None and states_for_the_user(turn.memory) and _ends_something(turn.memory.text):
            ordered.remove(turn)
            ordered.insert(position, in_place_of(turn, fact))
    return ordered


def _one_turns_fact(item: MemoryItem) -> bool:
    """What the write path took from one turn: a fact that replaced another carries that one's turns too."""
    return item.kind != "episode" and item.key is None and len(item.provenance.message_ids) == 1


def _said(turn: MemoryItem, fact: MemoryItem) -> bool:
    return turn.kind == "episode" and turn.provenance.message_ids == fact.provenance.message_ids


def _ends_something(text: str) -> bool:
    return any(ends_or_corrects(clause) for clause in clauses(text))
