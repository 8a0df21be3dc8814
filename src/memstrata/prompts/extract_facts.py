"""Extract durable facts from conversation turns, in the language they were said in.

User turns and assistant turns get different prompts: what a user says about themselves is
memory; what an assistant says is memory only when it records a decision, a commitment or
something the user confirmed. The system prompt is fixed (few-shot examples included) and the
turns come last, so a local model can reuse its cached prompt prefix between calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from memstrata.lexical import has_han
from memstrata.providers.llm import ChatMessage
from memstrata.types import Message

FactKind = Literal["preference", "fact", "plan", "event", "relationship", "procedure"]


class ExtractedFact(BaseModel):
    text: str = Field(description="one self-contained fact, in the language of the conversation")
    kind: FactKind = "fact"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    sources: list[int] = Field(default_factory=list, description="numbers of the turns the fact comes from")
    event_time: str | None = Field(default=None, description="ISO date when the event happened, if stated")
    key: str | None = Field(default=None, description="namespaced key like 'profile:home:city', optional")


class FactList(BaseModel):
    facts: list[ExtractedFact]


EntityType = Literal[
    "person", "organization", "location", "profession", "project", "paper", "concept", "product", "event", "thing"
]


class ExtractedRelation(BaseModel):
    subject: str = Field(min_length=1, max_length=200, description="entity name as said; '我' / 'I' for the user")
    subject_type: EntityType = "thing"
    relation: str = Field(min_length=1, max_length=64, description="snake_case, e.g. works_at, lives_in, likes")
    object: str = Field(min_length=1, max_length=200)
    object_type: EntityType = "thing"
    sources: list[int] = Field(default_factory=list)
    ended: bool = Field(default=False, description="true when the turn says the relation is no longer true")


class FactsAndRelations(FactList):
    """Facts and graph triples from the same call: one prompt, one decode."""

    relations: list[ExtractedRelation] = Field(default_factory=list)


_FORMAT = (
    'Output JSON: {"facts": [{"text": ..., "kind": ..., "confidence": ..., "sources": [turn numbers]}]}.\n'
    "kind: preference | fact | plan | event | relationship | procedure. confidence: 0.9 explicit, 0.6 implied."
)

_USER_EN = f"""You extract long-term memories about the USER from an English conversation.
Write every fact in ENGLISH, as "User ...". Do not translate names or places.
One self-contained fact per item. Small talk, greetings, questions and weather give NO facts.
{_FORMAT}

Example 1
[1] user: I've switched from coffee to green tea, and I'm flying to Berlin next Monday.
{{"facts": [{{"text": "User prefers green tea over coffee", "kind": "preference", "confidence": 0.9, "sources": [1]}},
 {{"text": "User is flying to Berlin next Monday", "kind": "plan", "confidence": 0.9, "sources": [1]}}]}}

Example 2
[1] user: My daughter Mia just started violin lessons.
{{"facts": [{{"text": "User has a daughter named Mia", "kind": "relationship", "confidence": 0.9, "sources": [1]}},
 {{"text": "User's daughter Mia started violin lessons", "kind": "event", "confidence": 0.9, "sources": [1]}}]}}

Example 3
[1] user: nice weather today, how are you?
{{"facts": []}}"""

_USER_ZH = f"""你从对话中提取关于用户的长期记忆。
用中文写每条记忆，以"用户"开头；对话里原本是英文的句子，记忆保持英文，绝不翻译。
每条只写一个完整的事实。寒暄、问候、提问、天气不产生记忆。
{_FORMAT}

示例 1
[1] user: 我叫王芳，在杭州做产品经理。我对花生过敏。
{{"facts": [{{"text": "用户叫王芳", "kind": "fact", "confidence": 0.9, "sources": [1]}},
 {{"text": "用户在杭州做产品经理", "kind": "fact", "confidence": 0.9, "sources": [1]}},
 {{"text": "用户对花生过敏", "kind": "fact", "confidence": 0.9, "sources": [1]}}]}}

示例 2
[1] user: 下个月我要搬到深圳，以后改喝美式了。
{{"facts": [{{"text": "用户下个月要搬到深圳", "kind": "plan", "confidence": 0.9, "sources": [1]}},
 {{"text": "用户现在喝美式咖啡", "kind": "preference", "confidence": 0.8, "sources": [1]}}]}}

示例 3
[1] user: 今天天气不错。
[2] user: 你好呀
{{"facts": []}}"""

_ASSISTANT = f"""You extract long-term memories from the ASSISTANT's turns of a conversation.
Keep only concrete commitments, decisions or settings the assistant recorded for the user, with their content.
A bare acknowledgement ("OK, noted", "好的，我记住了"), explanations, advice, greetings and questions give NO facts.
Write each fact in the language of its turn; never translate.
{_FORMAT}

Example 1
[1] assistant: 好的，以后订餐我会避开花生。
{{"facts": [{{"text": "助手承诺订餐时避开花生", "kind": "procedure", "confidence": 0.8, "sources": [1]}}]}}

Example 2
[1] assistant: Got it, noted!
[2] assistant: Python lists are mutable, tuples are not.
{{"facts": []}}"""


_GRAPH_ZH = """
同时提取实体之间的关系 relations（名称保持原文，用户本人写"我"）：
{"relations": [{"subject": ..., "subject_type": ..., "relation": ..., "object": ..., "object_type": ...,
 "sources": [...]}]}
relation 用英文 snake_case：spouse_of, works_at, lives_in, likes, depends_on, responsible_for, has_profession ...
type: person | organization | location | profession | project | concept | product | event | thing。
不再成立的关系（"我从腾讯离职了"）写 "ended": true。

示例
[1] user: 王总的太太是李女士，王总喜欢红酒。我在阿里工作。
{"facts": [{"text": "王总的太太是李女士", "kind": "relationship", "confidence": 0.9, "sources": [1]},
 {"text": "王总喜欢红酒", "kind": "fact", "confidence": 0.9, "sources": [1]},
 {"text": "用户在阿里工作", "kind": "fact", "confidence": 0.9, "sources": [1]}],
 "relations": [{"subject": "王总", "subject_type": "person", "relation": "spouse_of", "object": "李女士",
 "object_type": "person", "sources": [1]},
 {"subject": "王总", "subject_type": "person", "relation": "likes", "object": "红酒", "object_type": "product",
 "sources": [1]},
 {"subject": "我", "subject_type": "person", "relation": "works_at", "object": "阿里", "object_type": "organization",
 "sources": [1]}]}"""

_GRAPH_EN = """
Also extract relations between entities (names as said; the user is "I"):
{"relations": [{"subject": ..., "subject_type": ..., "relation": ..., "object": ..., "object_type": ...,
 "sources": [...]}]}
relation in snake_case: spouse_of, works_at, lives_in, likes, depends_on, responsible_for, has_profession ...
type: person | organization | location | profession | project | concept | product | event | thing.
A relation the turn says is over ("I left Google") gets "ended": true.

Example
[1] user: The checkout service depends on the payments API, and Dana owns the payments API.
{"facts": [{"text": "The checkout service depends on the payments API", "kind": "fact", "confidence": 0.9,
 "sources": [1]}, {"text": "Dana owns the payments API", "kind": "fact", "confidence": 0.9, "sources": [1]}],
 "relations": [{"subject": "checkout service", "subject_type": "project", "relation": "depends_on",
 "object": "payments API", "object_type": "project", "sources": [1]},
 {"subject": "Dana", "subject_type": "person", "relation": "responsible_for", "object": "payments API",
 "object_type": "project", "sources": [1]}]}"""


def render_turns(turns: Sequence[Message]) -> str:
    lines = []
    for number, turn in enumerate(turns, start=1):
        speaker = f"{turn.role} ({turn.name})" if turn.name else turn.role
        lines.append(f"[{number}] {speaker}: {turn.content}")
    return "\n".join(lines)


def extraction_prompt(
    turns: Sequence[Message], *, role: str, today: datetime, graph: bool = False
) -> list[ChatMessage]:
    """The prompt's own language follows the turns': small models answer in the language they are
    instructed in, so a Chinese instruction over English turns would translate the facts. With ``graph``
    the same call also returns relation triples (user turns only: assistants rarely state them)."""
    chinese = any(has_han(turn.content) for turn in turns)
    if role != "user":
        system = _ASSISTANT
    else:
        system = _USER_ZH if chinese else _USER_EN
        if graph:
            system += _GRAPH_ZH if chinese else _GRAPH_EN
    user = f"Date of the conversation: {today.date().isoformat()}\n{render_turns(turns)}"
    return [ChatMessage("system", system), ChatMessage("user", user)]
