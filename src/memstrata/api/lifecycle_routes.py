"""REST endpoints for the lifecycle: pending review, archive / restore, forgetting, erasure, sessions,
consolidation. Same pattern as ``routes.py``: check the key's scopes, call the Memory facade.

``maintain`` is not here: it sweeps every tenant, so it is an operator's job (``memstrata maintain``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from memstrata.api.models import (
    TEXT_PATTERN,
    ConsolidateRequest,
    ErasureResponse,
    ForgetRequest,
    ForgetResponse,
    MergedCount,
)
from memstrata.api.principal import AccessDenied
from memstrata.api.routes import ERRORS, CallerDep, MemoryId, ScopeDep, problems
from memstrata.errors import ConfirmationRequiredError
from memstrata.types import Job, MemoryItem, Message

router = APIRouter(prefix="/v1", responses=ERRORS, tags=["lifecycle"])
STATE_CONFLICT = problems(s409="the memory's status does not allow it (e.g. restoring a memory that is not archived)")
SessionId = Annotated[str, Path(min_length=1, max_length=256, pattern=TEXT_PATTERN)]
# The session routes take the session from the path, so only these two come from the query string.
UserQuery = Annotated[str | None, Query(min_length=1, max_length=256, pattern=TEXT_PATTERN)]
AgentQuery = Annotated[str | None, Query(min_length=1, max_length=256, pattern=TEXT_PATTERN)]


@router.get("/review", response_model=list[MemoryItem])
def review_queue(call: CallerDep, ids: ScopeDep, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[MemoryItem]:
    """Pending memories: extracted with low confidence, waiting for repetition or for a person."""
    return call.memory.review_queue(**call.scope(ids), limit=limit)


@router.post("/memories/{memory_id}/confirm", response_model=MemoryItem, responses=STATE_CONFLICT)
def confirm_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> MemoryItem:
    """A pending memory is right: make it active."""
    return call.memory.confirm(memory_id, **call.scope(ids), actor=call.actor)


@router.post("/memories/{memory_id}/reject", response_model=MemoryItem, responses=STATE_CONFLICT)
def reject_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> MemoryItem:
    """A pending memory is wrong: delete it (history keeps it)."""
    return call.memory.reject(memory_id, **call.scope(ids), actor=call.actor)


@router.post("/memories/{memory_id}/archive", response_model=MemoryItem, responses=STATE_CONFLICT)
def archive_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> MemoryItem:
    """Move an active memory to cold storage: out of normal search, kept and restorable."""
    return call.memory.archive(memory_id, **call.scope(ids), actor=call.actor)


@router.post("/memories/{memory_id}/restore", response_model=MemoryItem, responses=STATE_CONFLICT)
def restore_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> MemoryItem:
    """Bring an archived memory back into search."""
    return call.memory.restore(memory_id, **call.scope(ids), actor=call.actor)


@router.post("/forget", response_model=ForgetResponse)
def forget(body: ForgetRequest, call: CallerDep) -> ForgetResponse:
    """Find the memories about ``what``; with ``confirm`` they are soft-deleted, otherwise it is a preview."""
    result = call.memory.forget(
        body.what,
        **call.principal.scope(body.user_id, body.agent_id, body.session_id),
        confirm=body.confirm,
        min_similarity=body.min_similarity,
        limit=body.limit,
    )
    return ForgetResponse(matched=result.matched, deleted=result.deleted)


# ":path": a user id may hold "/" ("a/b" was stored, then its erase answered 404 no_route: a user trial)
@router.post("/users/{user_id:path}/erase", response_model=ErasureResponse,
             responses=problems(s409="confirm=true is missing: the erasure cannot be undone"))  # fmt: skip
def erase_user(
    user_id: Annotated[str, Path(min_length=1, max_length=256, pattern=TEXT_PATTERN)],
    call: CallerDep,
    confirm: Annotated[bool, Query(description="required: the erasure cannot be undone")] = False,
) -> ErasureResponse:
    """Remove everything about a user (memories, raw turns, history, vectors, jobs) for good, and prove it."""
    if not confirm:
        raise ConfirmationRequiredError(
            f"erasing {user_id!r} removes every memory, raw turn and history row for good; "
            "send the request again with ?confirm=true"
        )
    if call.principal.agent_ids is not None:  # the erasure reaches the user's memories of every agent
        raise AccessDenied("erasing a user needs a key that is not limited to some agents")
    allowed = call.principal.scope(user_id, None, None)["user_id"]
    report = call.memory.erase_user(str(allowed), confirm=confirm)
    return ErasureResponse(deleted=report.deleted, remaining=report.remaining)


@router.get("/sessions/{session_id:path}/context", response_model=list[Message])
def session_context(
    session_id: SessionId,
    call: CallerDep,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    budget_tokens: Annotated[int, Query(ge=1, le=1_000_000)] = 2000,
) -> list[Message]:
    """The most recent turns of a session that fit the token budget, oldest first (working memory)."""
    scope = call.principal.scope(user_id, agent_id, session_id)
    return call.memory.session_context(
        session_id, user_id=scope["user_id"], agent_id=scope["agent_id"], budget_tokens=budget_tokens
    )


@router.post("/sessions/{session_id:path}/end", response_model=list[Job])
def end_session(
    session_id: SessionId,
    call: CallerDep,
    user_id: UserQuery = None,
    agent_id: AgentQuery = None,
    wait: Annotated[bool, Query()] = False,
) -> list[Job]:
    """Hand the session's waiting turns to the write path (fact extraction); ``wait`` until it has run."""
    scope = call.principal.scope(user_id, agent_id, session_id)
    return call.memory.end_session(session_id, user_id=scope["user_id"], agent_id=scope["agent_id"], wait=wait)


@router.post("/consolidate", response_model=MergedCount)
def consolidate(body: ConsolidateRequest, call: CallerDep) -> MergedCount:
    """Merge near-duplicate memories of the same kind in a scope."""
    scope = call.principal.scope(body.user_id, body.agent_id, body.session_id)
    return MergedCount(merged=call.memory.consolidate(**scope, threshold=body.threshold))
