"""REST endpoints the web console needs beyond the general API (``/v1/console``).

Same pattern as ``routes.py``: the key's scopes are checked, then the Memory facade is called inside the
key's tenant. Nothing here writes; every answer is something a person browsing memories asks for and the
general API has no single call for: a list with every filter (key prefix, time ranges, a moment in valid or
record time), a memory's source turns, and the sessions of a scope.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from memstrata.api.models import MemoryPage
from memstrata.api.routes import ERRORS, CallerDep, MemoryId, ScopeDep
from memstrata.query import OrderField
from memstrata.types import MemoryStatus, StoredMessage, UtcDatetime

router = APIRouter(prefix="/v1/console", responses=ERRORS, tags=["console"])
# Grouping raw turns into sessions reads them, oldest first; past this many the answer says it was cut short.
MAX_TURNS_SCANNED = 20_000
EVERY_VERSION = [status.value for status in MemoryStatus]


class SessionSummary(BaseModel):
    session_id: str | None = Field(description="null: turns stored without a session")
    user_id: str | None
    agent_id: str | None
    turns: int
    first_at: datetime
    last_at: datetime
    preview: str = Field(description="the start of the session's first turn")


class SessionList(BaseModel):
    sessions: list[SessionSummary] = Field(description="most recent activity first")
    turns_scanned: int
    truncated: bool = Field(description="true when the scope has more turns than were read; narrow the scope")


def _range(start: datetime | None, end: datetime | None) -> dict[str, datetime] | None:
    bounds = {name: value for name, value in (("gte", start), ("lt", end)) if value is not None}
    return bounds or None


@router.get("/memories", response_model=MemoryPage)
def list_memories(
    call: CallerDep,
    ids: ScopeDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    kind: Annotated[list[str] | None, Query(description="only these kinds")] = None,
    status: Annotated[list[MemoryStatus] | None, Query(description="default: active only")] = None,
    key_prefix: Annotated[str | None, Query(min_length=1, max_length=256, description="e.g. project:db")] = None,
    created_from: Annotated[UtcDatetime | None, Query(description="created at or after")] = None,
    created_to: Annotated[UtcDatetime | None, Query(description="created before")] = None,
    as_of: Annotated[UtcDatetime | None, Query(description="valid time: the versions true then")] = None,
    known_at: Annotated[UtcDatetime | None, Query(description="record time: the versions the store held then")] = None,
    order_by: OrderField = "created_at",
    descending: bool = True,
) -> MemoryPage:
    """Memories of a scope with every filter the console offers, a page at a time.

    With ``as_of`` or ``known_at`` every version is considered and time decides, as in search: the page shows
    the memory as it stood then (superseded and deleted versions included when they held at that moment).
    """
    filters: dict[str, Any] = {"key_prefix": key_prefix, "created_at": _range(created_from, created_to)}
    if kind:
        filters["kind"] = kind
    if status:
        filters["status"] = status
    if as_of is not None or known_at is not None:
        filters.update(status=EVERY_VERSION, valid_at=as_of, known_at=known_at)
    items = call.memory.get_all(
        **call.scope(ids),
        filters={name: value for name, value in filters.items() if value is not None},
        limit=limit,
        offset=offset,
        order_by=order_by,
        descending=descending,
    )
    next_offset = offset + len(items) if len(items) == limit else None
    return MemoryPage(items=items, limit=limit, offset=offset, next_offset=next_offset)


@router.get("/memories/{memory_id}/turns", response_model=list[StoredMessage])
def provenance_turns(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> list[StoredMessage]:
    """The raw turns a memory was extracted from (its provenance), oldest first; empty for text added directly."""
    scope = call.scope(ids)
    item = call.memory.get(memory_id, **scope)  # 404 outside the key's tenant and scope
    wanted = list(item.provenance.message_ids)
    # Read inside the request's own scope (tenant included), never the memory's: the key decides what is visible.
    return call.memory.store.messages_by_id(call.memory.resolve_scope(**scope), wanted) if wanted else []


@router.get("/sessions", response_model=SessionList)
def sessions(call: CallerDep, ids: ScopeDep) -> SessionList:
    """The sessions of a scope with their turn counts and time span; ``GET /v1/messages?session_id=`` reads one."""
    turns = call.memory.messages(**call.scope(ids), limit=MAX_TURNS_SCANNED)
    grouped: dict[tuple[str | None, str | None, str | None], list[StoredMessage]] = {}
    for turn in turns:
        grouped.setdefault((turn.scope.session_id, turn.scope.user_id, turn.scope.agent_id), []).append(turn)
    found = [
        SessionSummary(
            session_id=session_id,
            user_id=user_id,
            agent_id=agent_id,
            turns=len(group),
            first_at=group[0].message.timestamp,
            last_at=group[-1].message.timestamp,
            preview=group[0].message.content[:120],
        )
        for (session_id, user_id, agent_id), group in grouped.items()
    ]
    found.sort(key=lambda summary: summary.last_at, reverse=True)
    return SessionList(sessions=found, turns_scanned=len(turns), truncated=len(turns) >= MAX_TURNS_SCANNED)
