"""What ``memory.context(...)`` returns: the text an agent should read, and what is in it, with citations."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from memstrata.deep.trace import DeepTrace
from memstrata.types import Frozen

Mode = Literal["fast", "deep"]
Audience = Literal["chat", "agent"]


class ContextTurn(Frozen):
    message_id: str
    role: str
    name: str | None = None
    content: str = Field(description="as shown in the text (possibly shortened)")
    timestamp: datetime


class ContextMemory(Frozen):
    ref: str = Field(description="the short id cited in the text, e.g. [3f2a91c0]")
    memory_id: str
    kind: str
    key: str | None = None
    date: datetime = Field(description="when it happened (event time), else when it was stored")
    relevance: float
    turns: tuple[ContextTurn, ...] = Field(default=(), description="the source turns shown under it")
    named: bool = Field(default=False, description="a key fact whose key the query names (always included)")


class MemoryContext(Frozen):
    """Rules, key facts, the user's standing facts (profile), relevant memories with their source turns and dates,
    and the session's recent turns, in that order, under ``budget_tokens`` (``tokens`` never exceeds it)."""

    query: str
    mode: Mode
    text: str
    tokens: int
    budget_tokens: int
    rules_files: tuple[str, ...] = ()
    facts: tuple[ContextMemory, ...] = ()
    profile: tuple[ContextMemory, ...] = Field(
        default=(), description="the user's own standing facts (allergies, diet, home, work, partner, kids, pets)"
    )
    memories: tuple[ContextMemory, ...] = ()
    session: tuple[ContextTurn, ...] = ()
    citations: tuple[str, ...] = Field(default=(), description="ids of the memories in the text, in order")
    left_out: int = Field(default=0, description="relevant memories and turns the budget had no room for")
    seconds: float = Field(default=0.0, description="time to build it, search and model calls included")
    trace: DeepTrace | None = Field(default=None, description="deep mode: how the memories were found")
