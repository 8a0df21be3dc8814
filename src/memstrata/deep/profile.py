"""The user's standing facts for a context: what holds now of the things most tasks depend on.

A task shares no word with the facts it needs: "Book a table for dinner Friday" with "我对花生过敏" or "I'm vegan
now", "Draft an email to my manager" with "I report to Sarah Kim", "Plan a family weekend" with the children's
names. Searched on the task's words alone, these scored about 0 and a context of 600 tokens held 250, filled with
chatter (a user trial with 56 agent tasks: 0.63 of the facts each task needed). So ``context`` also asks the
scope a few standing questions, one search each through the one search path (newer statements first, the relevance
cutoff, time travel as the request's), and shows the user's own answers in a profile block, after what the task
matched and within a share of the budget (deep/assemble.py).

Only the user's own word counts: not a reply, not a turn of a transcript between named speakers. Of the user's
family (partner, children, pets) any statement does ("Our daughter Sofia turned 5"); of the user's own state
(allergies, diet, home, work) only one that says it of the user in a first-person word ("I", "my", 我, 用户):
- not someone else's news ("我姐对芒果过敏");
- not one without a first-person word ("晓雯 is allergic to mango" was shown as the user's allergy in a held-out
  trial), nor one that opens with a name ("Yvonne asked where to live in 上海, I said anywhere near line 9" was
  shown as the user's home);
- not another's words the user quotes ("Yvonne: 「我對蝦子過敏」").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memstrata.indexing import states_for_the_user
from memstrata.lexical import has_han
from memstrata.query import SearchQuery
from memstrata.read.own_first import FIRST_PERSON, whose
from memstrata.read.spelling import is_common_word
from memstrata.types import MemoryItem, SearchHit


@dataclass(frozen=True)
class Standing:
    english: str
    chinese: str
    most: int  # answers kept: one where a newer one replaces the older (a home), more where they add up (allergies)
    family: bool = False  # about the user's family: a statement about them counts, not only one about the user


STANDING = (
    Standing("What am I allergic to?", "我对什么过敏？", 2),
    Standing("What is my diet?", "我的饮食有什么忌口？", 1),
    Standing("Where do I live now?", "我现在住在哪里？", 1),
    Standing("Where do I work now?", "我现在在哪里工作？", 1),
    Standing("Who is my partner?", "我另一半是谁？", 1, family=True),
    Standing("Do I have kids?", "我的孩子", 2, family=True),
    Standing("What pets do I have?", "我养了什么宠物？", 2, family=True),
)
ANSWERS_SEARCHED = 3  # hits asked of each question: the user's own answer may follow another's
# an answer scores at least this: "我的孩子" found "儿童节快乐，我也是宝宝" at 0.19; answers scored 0.24-0.63 in a trial
MIN_SCORE = 0.2


def standing_facts(
    search: Callable[[SearchQuery], list[SearchHit]], query: SearchQuery, shown: Iterable[str] = ()
) -> list[SearchHit]:
    """The user's own answers to :data:`STANDING`, asked in the request's language (category words are indexed in
    both), in the request's scope, filters and time; none already ``shown`` (memory ids), each once."""
    seen = set(shown)
    found = []
    for standing in STANDING:
        text = standing.chinese if has_han(query.text) else standing.english
        hits = search(query.model_copy(update={"text": text, "limit": ANSWERS_SEARCHED, "threshold": None}))
        # the first answers, shown already or not: where one replaces another, the next one is the older value
        answers = [hit for hit in hits if hit.score >= MIN_SCORE and _answers(hit.memory, standing)][: standing.most]
        found += [hit for hit in answers if hit.id not in seen]
        seen |= {hit.id for hit in answers}
    return found


# the user's own word, and the framing extracted facts use ("User …", "用户…")
_OF_THE_USER = re.compile(rf"{FIRST_PERSON.pattern}|\b(?:myself|user)\b|用户", re.IGNORECASE)
# Words quoted are the quoted person's: "Yvonne: 「我下個月調到上海辦公室！我對蝦子過敏喔」 so she's moving here"
_QUOTED = re.compile(r"「[^」]*」|『[^』]*』|“[^”]*”|\"[^\"]*\"")


def _answers(item: MemoryItem, standing: Standing) -> bool:
    if item.metadata.get("speaker") or not states_for_the_user(item):
        return False
    said = _QUOTED.sub(" ", item.text)
    if standing.family:
        return True
    return whose(item) == "user" and _OF_THE_USER.search(said) is not None and not _opens_with_a_name(said)


_OPENING_WORD = re.compile(r"\s*([A-Z][a-z]+)\b")


def _opens_with_a_name(text: str) -> bool:
    """ "Yvonne asked where to live in 上海, I said…" is Yvonne's news: a capitalised first word English rarely
    writes (Yvonne 490 in the spelling dictionary's counts; "Quick", "Met", "Started" above 90,000)."""
    opening = _OPENING_WORD.match(text)
    if opening is None or opening.group(1) in ("I", "My", "Me"):
        return False
    return not is_common_word(opening.group(1))
