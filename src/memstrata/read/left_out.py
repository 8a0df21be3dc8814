"""A turn answers before a fact of it that left out the ending it said.

A user trial: "年糕昨天走了，15岁的老猫了……其实她是我从我奶奶那里接过来的。" (the cat died) gave the bundled model two
facts, "用户年糕昨天走了" and "用户的15岁的老猫是她从她奶奶那里接过来的". "Do I have a cat?" found the second first
(0.79): it names a cat and the first does not, and nothing in it says that she died. Later news could not help: the
fact names no one for an ending to end. The turn it came from says both, verbatim, so where a fact's one turn is
among the first hits and ends or corrects something (modality.ends_or_corrects) while the fact ends nothing, the turn
takes the fact's place, above it. Where the fact does keep the ending ("用户年糕昨天走了"), it stays first.

The mirror of it: a fact that keeps only the ending of a turn that goes on to what begins next. "I quit Siemens
Healthineers. Joining 小红书 as a senior PM next week." gave "User quit Siemens Healthineers", which led "Where do I
work?" (another user trial): it says where the user no longer works. Its turn says both, so it answers instead.

And a fact that left out a name its turn gives ("用户的offer是十月入职" of "我拿到了 Shopee 新加坡的 offer, senior
backend, 十月入职"; "用户朵朵上小学了" of "朵朵上小学了，学校是莘庄实验小学"): the turn says what the fact says and the
name besides.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.answers import change_answers, planned_change_answers
from memstrata.indexing import states_for_the_user
from memstrata.lifecycle.decay import said_at
from memstrata.modality import clauses, ends_or_corrects
from memstrata.patterns import lazy_pattern
from memstrata.read.move_up import in_place_of
from memstrata.read.names import names_in
from memstrata.read.newer import FOLLOWED
from memstrata.types import MemoryItem, SearchHit


def turns_before_what_they_left_out(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """Each of the first ``FOLLOWED`` hits that is a fact of a turn also among them, preceded by that turn where the
    fact left out what the turn ends, what the turn begins after the ending the fact kept, or a name it gives."""
    ordered = list(hits)
    for position in range(min(FOLLOWED, len(ordered))):
        fact = ordered[position]
        if fact.memory.kind == "episode" or fact.memory.key is not None:
            continue
        turn = next((hit for hit in ordered[position + 1 : FOLLOWED] if _said(hit.memory, fact.memory)), None)
        if turn is None or not states_for_the_user(turn.memory):
            continue
        said, kept = turn.memory.text, fact.memory.text
        left_out_the_ending = _one_turns_fact(fact.memory) and not _ends_something(kept) and _ends_something(said)
        kept_only_the_ending = _ends_something(kept) and _begins_something(said) and not _begins_something(kept)
        if left_out_the_ending or kept_only_the_ending or names_left_out(said, kept):
            ordered.remove(turn)
            ordered.insert(position, in_place_of(turn, fact))
    return ordered


def names_left_out(said: str, kept: str) -> frozenset[str]:
    """The names the turn gives that the fact does not: "Big news: 我拿到了 Shopee 新加坡的 offer, senior backend, 十月
    入职" gave "用户的offer是十月入职", which led "Where do I work?" without the employer (a user trial)."""
    lowered = kept.lower()
    given = names_in(said) | {found[1] for found in _PLACE_NAMED.finditer(said)}
    return frozenset(name for name in given if name.lower() not in lowered)


# A school, a hospital or a firm named in Chinese after 是 / 叫 / 在: "朵朵上小学了，学校是莘庄实验小学" gave the
# model's "用户朵朵上小学了", which led "朵朵在哪上学？" without the school (a user trial); not "在徐汇的一家幼儿园",
# which names none
_PLACE_NAMED = lazy_pattern(
    r"(?:是|叫|在|进了?)((?:(?!的|一家|一所|一个|这|那)[\u4e00-\u9fff]){2,10}?"
    r"(?:小学|中学|大学|幼儿园|学校|医院|公司|银行|集团))"
)


def _one_turns_fact(item: MemoryItem) -> bool:
    """What the write path took from one turn: a fact that replaced another carries that one's turns too."""
    return len(item.provenance.message_ids) == 1


def _said(turn: MemoryItem, fact: MemoryItem) -> bool:
    """The turn the fact was taken from: one of its turns (a fact that replaced another carries that one's turns
    too), said when the fact was."""
    ids, turn_ids = fact.provenance.message_ids, turn.provenance.message_ids
    if turn.kind != "episode" or len(turn_ids) != 1 or turn_ids[0] not in ids:
        return False
    return len(ids) == 1 or said_at(turn) == said_at(fact)


def _ends_something(text: str) -> bool:
    return any(ends_or_corrects(clause) for clause in clauses(text))


def _begins_something(text: str) -> bool:
    """A clause that ends nothing and says or plans a change ("Joining 小红书 as a senior PM next week")."""
    return any(
        not ends_or_corrects(clause) and (change_answers(clause) or planned_change_answers(clause))
        for clause in clauses(text)
    )
