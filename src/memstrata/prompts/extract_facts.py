"""Extract durable facts from conversation turns, in the language they were said in.

One system prompt serves both languages, user and assistant turns alike: the bundled model keeps the
evaluated prompt in its cache, so every call after the first pays only for the turns. The answer is
compact on purpose (turn number and text; no kind, confidence or date per fact): output tokens are the
slowest part of a local model's call (~10 tokens/s on two cores), and the engine derives kind, confidence
and event time from the text and the turn's timestamp instead (``write/facts.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import BaseModel, Field

from memstrata.providers.llm import ChatMessage
from memstrata.types import Message


class ExtractedFact(BaseModel):
    turn: int = Field(default=0, description="number of the turn the fact was said in")
    text: str = Field(max_length=600, description="one self-contained fact, in the language of its turn")


class FactList(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=60)


# [subject, relation, object] or [subject, relation, object, "ended"]; types are inferred from the names.
CompactTriple = Annotated[list[Annotated[str, Field(max_length=200)]], Field(min_length=3, max_length=4)]


class ExtractedRelation(BaseModel):
    """The long form some servers (and older prompts) answer with; accepted beside the compact one."""

    subject: str = Field(min_length=1, max_length=200)
    subject_type: str | None = None
    relation: str = Field(min_length=1, max_length=64)
    object: str = Field(min_length=1, max_length=200)
    object_type: str | None = None
    ended: bool = False


class FactsAndRelations(FactList):
    """Facts and graph triples from the same call: one prompt, one decode. The prompt asks for the compact
    form (a third of the tokens); the long form is accepted too."""

    relations: list[CompactTriple | ExtractedRelation] = Field(default_factory=list, max_length=60)


_SYSTEM = """You extract long-term memories from a conversation. Turns are numbered.
For every clause that states a fact, output one self-contained fact with the number of its turn:
- about the user: identity, home, work, family, health, likes and dislikes, habits, plans, events, changes;
- about people the user mentions (sister, colleague, manager, friend): keep their names and relation to the user;
- a change or an ending is a fact: "User no longer drinks coffee", "用户卖掉了车", "用户现在喜欢冬天";
- keep time words as said ("last month", "下周", "in May");
- from assistant turns only concrete commitments or settings made for the user.
Write each fact in the language of its own turn: Chinese turns give Chinese facts starting with 用户, English
turns give English facts starting with User. Never translate; keep names as written. Greetings, thanks,
small talk, questions and weather give no facts.

Example 1
[1] user: 我上个月从上海搬到了苏州。我哥哥王磊在华为当工程师，我不再喝咖啡了。
{"facts": [{"turn": 1, "text": "用户上个月从上海搬到了苏州"}, {"turn": 1, "text": "用户的哥哥叫王磊"},
 {"turn": 1, "text": "用户的哥哥王磊在华为当工程师"}, {"turn": 1, "text": "用户不再喝咖啡"}]}

Example 2
[1] user: hey there!
[2] assistant: Hi! How can I help?
[3] user: I gave away my old piano last week. My manager 陈静 prefers short updates, and I'm off to Lisbon in June.
{"facts": [{"turn": 3, "text": "User gave away their old piano last week"},
 {"turn": 3, "text": "User's manager is 陈静"}, {"turn": 3, "text": "User's manager 陈静 prefers short updates"},
 {"turn": 3, "text": "User is going to Lisbon in June"}]}

Example 3
[1] user: 我对海鲜过敏。
[2] assistant: 好的，以后推荐餐厅我会避开海鲜。
{"facts": [{"turn": 1, "text": "用户对海鲜过敏"}, {"turn": 2, "text": "助手承诺推荐餐厅时避开海鲜"}]}

Example 4
[1] user: 今天天气不错，你好吗？
{"facts": []}"""

_GRAPH = """

Also list relations between named entities as [subject, relation, object], or [subject, relation, object,
"ended"] when the turn says it is over. The user is "我" in Chinese turns and "I" in English turns; names stay as
said. relation is English snake_case: lives_in, works_at, sibling_of, spouse_of, friend_of, colleague_of,
reports_to, likes, has_profession, studies_at, depends_on, responsible_for.
For example 1 also: "relations": [["我", "lives_in", "苏州"], ["我", "lives_in", "上海", "ended"],
 ["王磊", "sibling_of", "我"], ["王磊", "works_at", "华为"], ["王磊", "has_profession", "工程师"]]"""


def render_turns(turns: Sequence[Message]) -> str:
    lines = []
    for number, turn in enumerate(turns, start=1):
        speaker = f"{turn.role} ({turn.name})" if turn.name else turn.role
        lines.append(f"[{number}] {speaker}: {turn.content}")
    return "\n".join(lines)


def extraction_prompt(turns: Sequence[Message], *, graph: bool = False) -> list[ChatMessage]:
    """The system prompt is fixed (per ``graph``) and comes first so its evaluation is cached; only the turns
    change. No date is given: time words stay as said and are resolved against each turn's own timestamp."""
    system = _SYSTEM + (_GRAPH if graph else "")
    return [ChatMessage("system", system), ChatMessage("user", render_turns(turns))]


def language_note(indexes: Sequence[int]) -> ChatMessage:
    """Asked once when facts come back translated (a small model's habit)."""
    numbers = ", ".join(str(i + 1) for i in indexes)
    return ChatMessage(
        "user",
        f"Facts {numbers} are not in the language of their turn. Answer again with the same facts, each written in "
        "the language its turn was said in. Never translate.",
    )
