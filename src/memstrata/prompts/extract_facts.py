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


_USER_SYSTEM = """You extract long-term memories about the USER from a conversation.
Rules:
- Output JSON: {"facts": [{"text": ..., "kind": ..., "confidence": ..., "sources": [...]}]}.
- Keep each fact in the SAME LANGUAGE as the turn it comes from. Never translate. Chinese stays Chinese.
- One self-contained fact per item; write "用户..." in Chinese or "User ..." in English.
- kind: preference (likes, dislikes, wants), fact (identity, job, health, places), plan (intentions, schedule),
  event (something that happened), relationship (people in the user's life), procedure (how the user does things).
- confidence: 0.9 for explicit statements, 0.6 for implied ones.
- Small talk, greetings, questions and weather give NO facts: {"facts": []}.

Example 1
[1] user: 我叫王芳，在杭州做产品经理。我对花生过敏。
{"facts": [{"text": "用户叫王芳", "kind": "fact", "confidence": 0.9, "sources": [1]},
 {"text": "用户在杭州做产品经理", "kind": "fact", "confidence": 0.9, "sources": [1]},
 {"text": "用户对花生过敏", "kind": "fact", "confidence": 0.9, "sources": [1]}]}

Example 2
[1] user: I've switched from coffee to green tea, and I'm flying to Berlin next Monday.
{"facts": [{"text": "User prefers green tea over coffee", "kind": "preference", "confidence": 0.9, "sources": [1]},
 {"text": "User is flying to Berlin next Monday", "kind": "plan", "confidence": 0.9, "sources": [1]}]}

Example 3
[1] user: 今天天气不错。
[2] user: hi, how are you?
{"facts": []}"""

_ASSISTANT_SYSTEM = """You extract long-term memories from the ASSISTANT's turns of a conversation.
Only keep what the assistant committed to, decided, or recorded about the user (reminders, agreed plans,
confirmed settings). Explanations, advice, greetings and questions give NO facts.
Output JSON: {"facts": [{"text": ..., "kind": ..., "confidence": ..., "sources": [...]}]}.
Keep each fact in the SAME LANGUAGE as its turn. Never translate.

Example 1
[1] assistant: 好的，我记住了：以后订餐避开花生。
{"facts": [{"text": "助手承诺订餐时避开花生", "kind": "procedure", "confidence": 0.8, "sources": [1]}]}

Example 2
[1] assistant: Python lists are mutable, tuples are not.
{"facts": []}"""


def render_turns(turns: Sequence[Message]) -> str:
    lines = []
    for number, turn in enumerate(turns, start=1):
        speaker = f"{turn.role} ({turn.name})" if turn.name else turn.role
        lines.append(f"[{number}] {speaker}: {turn.content}")
    return "\n".join(lines)


def extraction_prompt(turns: Sequence[Message], *, role: str, today: datetime) -> list[ChatMessage]:
    system = _USER_SYSTEM if role == "user" else _ASSISTANT_SYSTEM
    user = f"Date of the conversation: {today.date().isoformat()}\n{render_turns(turns)}"
    return [ChatMessage("system", system), ChatMessage("user", user)]
