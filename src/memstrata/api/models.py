"""Request and response bodies of the REST API.

Responses reuse the public value types (MemoryItem, SearchHit, HistoryEvent, Job, ...) so REST
returns exactly what the Python API returns; only what has no public type yet is defined here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memstrata.query import Filters
from memstrata.types import MemoryItem, Role, UtcDatetime


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScopeBody(Body):
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    agent_id: str | None = Field(default=None, min_length=1, max_length=256)
    session_id: str | None = Field(default=None, min_length=1, max_length=256)


class MessageIn(Body):
    role: Role
    content: str = Field(min_length=1)
    name: str | None = None
    timestamp: UtcDatetime | None = Field(default=None, description="when it was said (default: now)")

    def as_input(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class AddRequest(ScopeBody):
    """Either ``text`` (one or more memories) or ``messages`` (conversation turns), not both."""

    text: str | list[str] | None = Field(default=None, description="a memory, or several")
    messages: list[MessageIn] | None = Field(default=None, min_length=1, description="conversation turns")
    metadata: dict[str, Any] | None = None
    infer: bool = Field(default=False, description="extract facts from the turns in the background (a job)")
    wait: bool = Field(default=False, description="with infer: wait until the extraction job has run")
    kind: str | None = Field(
        default=None, description="text only: fact (default), preference, procedure, knowledge, ..."
    )
    key: str | None = Field(default=None, description="text only: namespaced key, e.g. project:db:engine")
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, description="text only (default 1.0)")
    event_time: UtcDatetime | None = Field(default=None, description="text only: when the fact became true")

    @model_validator(mode="after")
    def _one_input(self) -> AddRequest:
        if (self.text is None) == (self.messages is None):
            raise ValueError("send either text or messages")
        return self

    def payload(self) -> str | list[str] | list[dict[str, Any]]:
        if self.messages is not None:
            return [message.as_input() for message in self.messages]
        assert self.text is not None
        return self.text


class SearchRequest(ScopeBody):
    query: str = Field(min_length=1)
    limit: int = Field(default=10, ge=1, le=1000)
    filters: Filters | None = None
    threshold: float | None = Field(default=None, ge=-1.0, le=1.0, description="minimum cosine similarity")
    as_of: UtcDatetime | None = Field(default=None, description="valid time: what was true then")
    known_at: UtcDatetime | None = Field(default=None, description="record time: what the store held then")
    include_archived: bool = Field(default=False, description="also search archived memories")


class UsedRequest(ScopeBody):
    memory_ids: list[str] = Field(min_length=1, max_length=1000, description="ids of the memories an answer used")


class MarkedUsed(Body):
    marked: int


class UpdateRequest(Body):
    text: str | None = None
    metadata: dict[str, Any] | None = Field(default=None, description="merged into the existing metadata")
    reason: str | None = Field(default=None, max_length=1000)

    @model_validator(mode="after")
    def _something(self) -> UpdateRequest:
        if self.text is None and self.metadata is None:
            raise ValueError("send new text, new metadata, or both")
        return self


class ForgetRequest(ScopeBody):
    what: str = Field(min_length=1, description="what to forget, e.g. 'my old address'")
    confirm: bool = Field(default=False, description="delete the matches; without it, only a preview")
    min_similarity: float = Field(default=0.45, ge=0.0, le=1.0, description="semantic matches below are left")
    limit: int = Field(default=20, ge=1, le=200)


class ConsolidateRequest(ScopeBody):
    threshold: float = Field(default=0.92, gt=0.5, le=1.0, description="cosine similarity to merge at")


class ForgetResponse(BaseModel):
    matched: list[MemoryItem]
    deleted: bool


class ErasureResponse(BaseModel):
    deleted: dict[str, int] = Field(description="rows removed per table")
    remaining: dict[str, int] = Field(description="rows about the user left per table: all zero")


class MergedCount(BaseModel):
    merged: int


class MemoryPage(BaseModel):
    items: list[MemoryItem]
    limit: int
    offset: int
    next_offset: int | None = Field(description="pass as offset for the next page; null on the last page")


class DeletedCount(BaseModel):
    deleted: int


class Stats(BaseModel):
    memories_by_status: dict[str, int]
    memories_by_kind: dict[str, int]
    messages: int
    history_events: int
    vectors: int
    embedding_id: str | None
    schema_version: int


class WhoAmI(BaseModel):
    key_id: str | None
    tenant_id: str | None
    user_ids: list[str] | Literal["all"]
    agent_ids: list[str] | Literal["all"]


class Health(BaseModel):
    status: Literal["ok"]


class Readiness(BaseModel):
    status: Literal["ready"]
    embedder: str
    stored_embedding: str | None
