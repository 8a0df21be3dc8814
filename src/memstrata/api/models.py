"""Request and response bodies of the REST API.

Responses reuse the public value types (MemoryItem, SearchHit, HistoryEvent, Job, ...) so REST
returns exactly what the Python API returns; only what has no public type yet is defined here.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_validator,
)

from memstrata.query import Filters
from memstrata.types import AddResult, ItemError, MemoryItem, Role, UtcDatetime
from memstrata.validation import describe_validation_error


def _not_a_bool(value: object) -> object:
    if isinstance(value, bool | str):
        raise ValueError("expected a JSON number")
    return value


# JSON numbers and booleans as they are: `true` is not the number 1, and "1" is not true (JSON Schema's
# integer does include 98.0, so that stays a valid count). Datetimes and enums still arrive as strings.
Number = Annotated[float, BeforeValidator(_not_a_bool)]
# A number in [0, 1]. Bounds inside the type, not on an optional field's Field(): pydantic wrote those as the
# unknown keys "ge" / "le" into the schema, so OpenAPI and MCP clients saw no bounds.
Unit = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False), BeforeValidator(_not_a_bool)]
Seconds = Annotated[float, Field(ge=0, le=1e9), BeforeValidator(_not_a_bool)]  # a step's cost
Tokens = Annotated[int, Field(ge=0, le=2**62), BeforeValidator(_not_a_bool)]
Count = Annotated[int, BeforeValidator(_not_a_bool)]
Flag = Annotated[bool, Field(strict=True)]
# Text that can be stored: something besides whitespace, and no NUL (PostgreSQL refuses it).
TEXT_PATTERN = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_NUL = r"^[^\x00]*$"
ScopeId = Annotated[
    str | None,
    Field(min_length=1, max_length=256, pattern=TEXT_PATTERN, description="at least one of the scope ids is needed"),
]
SCOPE_RULE = (
    "Every request names a scope: at least one of user_id, agent_id and session_id (a key bound to exactly one "
    "user or agent fills that one in). A request without one is refused with 422."
)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _present(*names: str) -> list[dict[str, Any]]:
    """JSON Schema alternatives "at least one of these fields, not null"."""
    return [{"required": [name], "properties": {name: {"not": {"type": "null"}}}} for name in names]


def _one_scope_id(schema: dict[str, Any]) -> None:
    schema["anyOf"] = _present("user_id", "agent_id", "session_id")


def _time_string(value: object) -> object:
    """JSON has no datetime type: a time is an ISO 8601 string, never a number read as a Unix timestamp."""
    if value is not None and not isinstance(value, str | datetime):
        raise ValueError("a time must be an ISO 8601 string such as 2024-05-01T09:30:00Z")
    return value


TimeIn = Annotated[UtcDatetime, BeforeValidator(_time_string)]
_RANGE_FIELDS = ("created_at", "updated_at", "event_time")


def _filter_times_are_strings(value: object) -> object:
    if isinstance(value, dict):
        for name in ("valid_at", "known_at"):
            _time_string(value.get(name))
        for name in _RANGE_FIELDS:
            bounds = value.get(name)
            if isinstance(bounds, dict):
                for end in ("gte", "lt"):
                    _time_string(bounds.get(end))
    return value


class ScopeBody(Body):
    user_id: ScopeId = None
    agent_id: ScopeId = None
    session_id: ScopeId = None


class ScopedBody(ScopeBody):
    """A body that names its scope. The schema says so (anyOf), so generated clients and fuzzers know it."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_one_scope_id)


class MessageIn(Body):
    role: Role
    content: str = Field(pattern=NO_NUL, description="the turn verbatim; may be empty (a tool call, an image)")
    name: str | None = Field(default=None, max_length=256, pattern=NO_NUL)
    timestamp: TimeIn | None = Field(default=None, description="when it was said (default: now)")
    id: str | None = Field(
        default=None, min_length=1, max_length=256, pattern=TEXT_PATTERN,
        description="your id for the turn: sending the same turn again stores nothing new",
    )  # fmt: skip

    def as_input(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class TextItemBody(Body):
    """One text of a batch, with its own options (they override the request's)."""

    text: str = Field(pattern=TEXT_PATTERN)
    metadata: dict[str, Any] | None = None
    kind: str | None = Field(default=None, pattern=r"^[a-z_][a-z0-9_\-]{0,63}$")
    key: str | None = Field(default=None, max_length=512)
    confidence: Unit | None = None
    event_time: TimeIn | None = None


_TEXT: TypeAdapter[str] = TypeAdapter(str)


def _check_item(field: str, item: object) -> None:
    """Validate one item of ``text`` or ``messages`` as the request's schema would (ValidationError if not)."""
    if field == "messages":
        MessageIn.model_validate(item)
    elif isinstance(item, dict):
        TextItemBody.model_validate(item)
    else:
        _TEXT.validate_python(item)


def _text_or_messages(schema: dict[str, Any]) -> None:
    schema["allOf"] = [{"anyOf": _present("user_id", "agent_id", "session_id")},
                       {"oneOf": _present("text", "messages")}]  # fmt: skip


class AddRequest(ScopedBody):
    """Either ``text`` (one or more memories) or ``messages`` (conversation turns), not both."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_text_or_messages)

    text: str | list[str | TextItemBody] | None = Field(
        default=None, description="a memory, or several: strings, or {text, metadata, kind, ...} items"
    )
    messages: list[MessageIn] | None = Field(default=None, min_length=1, description="conversation turns")
    metadata: dict[str, Any] | None = None
    infer: Flag = Field(default=False, description="extract facts from the turns in the background (a job)")
    wait: Flag = Field(default=False, description="with infer: wait until the extraction job has run")
    kind: str | None = Field(
        default=None,
        pattern=r"^[a-z_][a-z0-9_\-]{0,63}$",
        description="text only: fact (default), preference, procedure, knowledge, ... (any lowercase identifier)",
    )
    key: str | None = Field(default=None, description="text only: namespaced key, e.g. project:db:engine")
    confidence: Unit | None = Field(default=None, description="text only (default 1.0)")
    event_time: TimeIn | None = Field(default=None, description="text only: when the fact became true")
    on_error: Literal["raise", "skip"] = Field(
        default="raise", description="raise: one bad item refuses the request; skip: store the rest, list the bad"
    )

    # With on_error="skip", items the schema refuses are left out and reported like those add() refuses
    # (by their position in the request), instead of refusing the request: a batch is one bad item short.
    _skipped: list[ItemError] = PrivateAttr(default_factory=list)
    _positions: list[int] | None = PrivateAttr(default=None)  # request position of each item sent on

    @model_validator(mode="wrap")
    @classmethod
    def _leave_out_bad_items(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> AddRequest:
        if not isinstance(data, dict) or data.get("on_error") != "skip":
            return handler(data)  # type: ignore[no-any-return]
        data, skipped, positions = dict(data), [], None
        for name in ("text", "messages"):
            sent = data.get(name)
            if not isinstance(sent, list) or not sent:
                continue
            kept, positions = [], []
            for position, item in enumerate(sent):
                try:
                    _check_item(name, item)
                except ValidationError as exc:
                    reason = f"item {position}: {describe_validation_error(exc)}"
                    skipped.append(ItemError(index=position, error=reason))
                else:
                    kept.append(item)
                    positions.append(position)
            if not kept:
                raise ValueError(f"none of the {len(sent)} items of {name} is valid; {skipped[0].error}")
            data[name] = kept
        request: AddRequest = handler(data)
        request._skipped, request._positions = skipped, positions
        return request

    @model_validator(mode="after")
    def _one_input(self) -> AddRequest:
        if (self.text is None) == (self.messages is None):
            raise ValueError("send either text or messages")
        return self

    @property
    def skipped_any(self) -> bool:
        return bool(self._skipped)

    def renumbered(self, message: str) -> str:
        """add()'s message about the items sent on, with each "item N" as the caller numbered its request."""
        positions = self._positions
        if positions is None or not self._skipped:
            return message

        def moved(found: re.Match[str]) -> str:
            number = int(found.group(1))
            return f"item {positions[number]}" if number < len(positions) else found.group(0)

        return re.sub(r"\bitem (\d+)\b", moved, message)

    def none_kept(self, message: str) -> str:
        """Why nothing was stored when add() refused every item sent on, with the items the schema refused."""
        return "; ".join([f"none of the items is valid: {self.renumbered(message)}",
                          *(error.error for error in self._skipped)])  # fmt: skip

    def with_skipped(self, result: AddResult) -> AddResult:
        """``result`` of the items sent on, with positions and errors as the caller numbered its request."""
        if self._positions is None or not self._skipped:
            return result
        positions = self._positions
        results = tuple(
            event if event.index is None else event.model_copy(update={"index": positions[event.index]})
            for event in result.results
        )
        moved = [
            error.model_copy(update={"index": positions[error.index], "error": self.renumbered(error.error)})
            for error in result.errors
        ]
        errors = tuple(sorted([*self._skipped, *moved], key=lambda error: error.index))
        return result.model_copy(update={"results": results, "errors": errors})

    def payload(self) -> str | list[str | dict[str, Any]] | list[dict[str, Any]]:
        if self.messages is not None:
            return [message.as_input() for message in self.messages]
        assert self.text is not None
        if isinstance(self.text, str):
            return self.text
        return [item if isinstance(item, str) else item.model_dump(exclude_none=True) for item in self.text]


class SearchRequest(ScopedBody):
    query: str = Field(min_length=1, max_length=20_000, pattern=TEXT_PATTERN)
    limit: Count = Field(default=10, ge=1, le=1000)
    filters: Annotated[Filters | None, BeforeValidator(_filter_times_are_strings)] = None
    threshold: Unit | None = Field(
        default=None, description="minimum relevance in [0, 1] (default search.min_relevance; 0: all)"
    )
    as_of: TimeIn | None = Field(default=None, description="valid time: what was true then")
    known_at: TimeIn | None = Field(default=None, description="record time: what the store held then")
    include_archived: Flag = Field(default=False, description="also search archived memories")
    mode: Literal["fast", "deep"] = Field(
        default="fast",
        description="deep: the query is understood, expanded and re-searched with the configured model "
        "(offline heuristics without one); slower, see /v1/memories/search/deep for its trace",
    )


MemoryIdText = Annotated[str, Field(min_length=1, max_length=256, pattern=TEXT_PATTERN)]


class UsedRequest(ScopedBody):
    memory_ids: list[MemoryIdText] = Field(
        min_length=1, max_length=1000, description="ids of the memories an answer used"
    )


class MarkedUsed(Body):
    marked: int


def _text_or_metadata(schema: dict[str, Any]) -> None:
    schema["anyOf"] = _present("text", "metadata")


class UpdateRequest(Body):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_text_or_metadata)

    text: str | None = Field(default=None, max_length=20_000, pattern=TEXT_PATTERN)
    metadata: dict[str, Any] | None = Field(default=None, description="merged into the existing metadata")
    reason: str | None = Field(default=None, max_length=1000, pattern=NO_NUL)

    @model_validator(mode="after")
    def _something(self) -> UpdateRequest:
        if self.text is None and self.metadata is None:
            raise ValueError("send new text, new metadata, or both")
        return self


class ForgetRequest(ScopedBody):
    what: str = Field(min_length=1, max_length=20_000, pattern=TEXT_PATTERN, description="e.g. 'my old address'")
    confirm: Flag = Field(default=False, description="delete the matches; without it, only a preview")
    min_similarity: Number = Field(default=0.45, ge=0.0, le=1.0, description="semantic matches below are left")
    limit: Count = Field(default=20, ge=1, le=200)


class ConsolidateRequest(ScopedBody):
    threshold: Number = Field(default=0.92, gt=0.5, le=1.0, description="cosine similarity to merge at")


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
