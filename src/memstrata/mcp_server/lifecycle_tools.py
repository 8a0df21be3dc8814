"""MCP tools for the lifecycle: forgetting on request, pending review, archive / restore, session context and end.

Erasing a user and consolidation are not offered to agents: one is irreversible and both are decisions
for a person or an operator (REST and the CLI have them).
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from memstrata.api.models import ForgetResponse
from memstrata.mcp_server.common import READ_ONLY, AgentId, Callers, MemoryIdArg, SessionId, UserId, reported, writes
from memstrata.types import Job, MemoryItem, Message


def register_lifecycle_tools(server: MCPServer, callers: Callers) -> None:
    scoped = callers.scoped

    @server.tool(annotations=writes("Forget memories", destructive=True))
    @reported
    def forget_memories(
        ctx: Context[Any, Any],
        what: Annotated[str, Field(description="what the user wants forgotten, e.g. 'my old phone number'")],
        confirm: Annotated[bool, Field(description="false: only list what would be forgotten; true: delete")] = False,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> ForgetResponse:
        """When the user asks to forget something: call first without confirm to see the matches, then
        with confirm=true to delete them (history records the request)."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        result = view.forget(what, **scope, confirm=confirm)
        return ForgetResponse(matched=result.matched, deleted=result.deleted)

    @server.tool(annotations=READ_ONLY)
    @reported
    def review_pending(
        ctx: Context[Any, Any],
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
    ) -> list[MemoryItem]:
        """Facts extracted with low confidence, waiting to be confirmed or rejected (ask the user)."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.review_queue(**scope, limit=limit)

    @server.tool(annotations=writes("Confirm memory", destructive=False, idempotent=True))
    @reported
    def confirm_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """The user confirmed a pending fact: make it an active memory."""
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        return view.confirm(memory_id, **scope, actor=actor)

    @server.tool(annotations=writes("Reject memory", destructive=True, idempotent=True))
    @reported
    def reject_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """The user said a pending fact is wrong: delete it."""
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        return view.reject(memory_id, **scope, actor=actor)

    @server.tool(annotations=writes("Archive memory", destructive=False))
    @reported
    def archive_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """Move a memory that is no longer current to the archive: out of search, kept, restorable."""
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        return view.archive(memory_id, **scope, actor=actor)

    @server.tool(annotations=writes("Restore memory", destructive=False))
    @reported
    def restore_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """Bring an archived memory back into search."""
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        return view.restore(memory_id, **scope, actor=actor)

    @server.tool(annotations=READ_ONLY)
    @reported
    def session_context(
        ctx: Context[Any, Any],
        session_id: Annotated[str, Field(description="the conversation whose recent turns you need")],
        user_id: UserId = None,
        agent_id: AgentId = None,
        budget_tokens: Annotated[int, Field(ge=1, le=1_000_000, description="most tokens to return")] = 2000,
    ) -> list[Message]:
        """The most recent stored turns of a session that fit the token budget, oldest first."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.session_context(
            session_id, user_id=scope["user_id"], agent_id=scope["agent_id"], budget_tokens=budget_tokens
        )

    @server.tool(annotations=writes("End a session", destructive=False))
    @reported
    def end_session(
        ctx: Context[Any, Any],
        session_id: Annotated[str, Field(description="the conversation that has ended")],
        user_id: UserId = None,
        agent_id: AgentId = None,
    ) -> list[Job]:
        """Call when a conversation ends: its turns added with infer that still wait for more (a short session) go
        to fact extraction now, in the background, and the session's summary is stored. Returns its jobs."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.end_session(session_id, user_id=scope["user_id"], agent_id=scope["agent_id"])
