"""The MCP server: memory tools for agents, over stdio (``memstrata mcp``) or streamable HTTP (``/mcp``).

Each tool translates its arguments and calls the same Memory facade as the Python API, through the
caller's Principal: over HTTP the principal comes from the request's API key (resolved by the
guard in ``memstrata.api.auth``), so MCP honours exactly the keys, tenants and scopes that REST does;
over stdio it is the local process's own, fixed at start-up.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from memstrata.api.models import MessageIn
from memstrata.api.principal import Principal
from memstrata.errors import InvalidInputError
from memstrata.mcp_server.arguments import StrictArgumentsServer
from memstrata.mcp_server.common import (
    READ_ONLY,
    AgentId,
    Callers,
    MemoryIdArg,
    SessionId,
    UserId,
    reported,
    writes,
)
from memstrata.mcp_server.context_tools import AsOfArg, register_context_tools
from memstrata.mcp_server.graph_tools import register_graph_tools
from memstrata.mcp_server.knowledge_tools import register_knowledge_tools
from memstrata.mcp_server.lifecycle_tools import register_lifecycle_tools
from memstrata.mcp_server.task_tools import register_task_tools
from memstrata.mcp_server.vault_tools import register_vault_tools
from memstrata.memory import Memory
from memstrata.query import Filters
from memstrata.types import AddResult, HistoryEvent, MemoryItem, SearchHit

INSTRUCTIONS = """\
Long-term memory for this user. Search it before answering questions about the user's preferences,
facts or past conversations (search_memory); store new durable facts as they come up (add_memory),
one fact per call, in the user's own language. Memories are scoped by user_id / agent_id / session_id:
pass the same ids every time. Correct a fact with update_memory rather than adding a contradicting one.
"""


def build_server(memory: Memory, *, local: Principal | None = None) -> StrictArgumentsServer:
    """``local``: the principal of a stdio process. Without it (HTTP) every request must carry its own."""
    server = StrictArgumentsServer("memstrata", instructions=INSTRUCTIONS, log_level="WARNING")

    callers = Callers(memory, local)
    scoped = callers.scoped
    register_vault_tools(server, callers)

    @server.tool(annotations=writes("Add memory", destructive=False))
    @reported
    def add_memory(
        ctx: Context[Any, Any],
        text: Annotated[
            str | list[str] | None,
            Field(description="one self-contained fact, e.g. 'Prefers oolong tea', or a list of them (as REST)"),
        ] = None,
        messages: Annotated[
            list[MessageIn] | None, Field(description="conversation turns to store verbatim instead of text")
        ] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        kind: Annotated[
            str | None, Field(description="for text: fact (default), preference, procedure, knowledge, ...")
        ] = None,
        key: Annotated[str | None, Field(description="namespaced key, e.g. 'project:db:engine'; replaces")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="small JSON object kept with it")] = None,
        infer: Annotated[bool, Field(description="extract facts from the messages in the background")] = False,
        event_time: Annotated[
            datetime | None,
            Field(description="for text: when it became true (ISO 8601); a key's values then travel in time (as_of)"),
        ] = None,
    ) -> AddResult:
        """Store a memory (text) or conversation turns (messages). Returns the ids of what was stored.

        With a key, an existing memory under that key is updated instead (its old text stays in history)."""
        if (text is None) == (messages is None):  # as REST: one of them, never a text silently dropped
            raise InvalidInputError("send either text or messages, not both and not neither")
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        payload: Any = [m.as_input() for m in messages] if messages is not None else text
        # kind and key go along even with infer: add() refuses options it would ignore, and says so.
        return view.add(payload, **scope, metadata=metadata, infer=infer, kind=kind, key=key, event_time=event_time,
                        actor=actor)  # fmt: skip

    @server.tool(annotations=writes("Mark memories used", destructive=False))
    @reported
    def mark_memories_used(
        ctx: Context[Any, Any],
        memory_ids: Annotated[list[str], Field(min_length=1, max_length=100, description="ids an answer relied on")],
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> dict[str, int]:
        """Tell memory which memories your answer actually used. Use, not retrieval, is what keeps a memory
        ranked well over time; call it after answering with memories from search_memory."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return {"marked": view.mark_used(memory_ids, **scope)}

    @server.tool(annotations=READ_ONLY)
    @reported
    def search_memory(
        ctx: Context[Any, Any],
        query: Annotated[str, Field(description="what to look for, in any language (Chinese and English mix)")],
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="how many hits")] = 10,
        kinds: Annotated[list[str] | None, Field(description="only these kinds, e.g. ['preference']")] = None,
        mode: Annotated[
            Literal["fast", "deep"], Field(description="deep: understand and expand the query with the model (slower)")
        ] = "fast",
        as_of: AsOfArg = None,
    ) -> list[SearchHit]:
        """Find memories relevant to a query (keyword + semantic). Best hits first, with scores. as_of: what held
        at that time instead of now."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        filters = Filters(kind=tuple(kinds)) if kinds else None
        return view.search(query, **scope, limit=limit, filters=filters, mode=mode, as_of=as_of)

    @server.tool(annotations=READ_ONLY)
    @reported
    def get_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """Read one memory with every field (text, kind, metadata, timestamps, provenance); the id may be a unique
        prefix, such as the 8 characters context() shows."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.get(view.resolve_id(memory_id, **scope), **scope)

    @server.tool(annotations=READ_ONLY)
    @reported
    def list_memories(
        ctx: Context[Any, Any],
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 50,
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> list[MemoryItem]:
        """List the active memories of a scope, newest first; page with offset."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.get_all(**scope, limit=limit, offset=offset)

    @server.tool(annotations=writes("Update memory", destructive=True))
    @reported
    def update_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        text: Annotated[str | None, Field(description="the corrected text")] = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="merged into the memory's metadata")] = None,
        reason: Annotated[str | None, Field(description="why it changed, kept in the history")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """Correct a memory's text and/or metadata. The previous text is kept in its history."""
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        return view.update(memory_id, text, metadata=metadata, reason=reason, **scope, actor=actor)

    @server.tool(annotations=writes("Delete memory", destructive=True, idempotent=True))
    @reported
    def delete_memory(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        reason: Annotated[str | None, Field(description="why, kept in the history")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> MemoryItem:
        """Delete a memory that is wrong or that the user asked to forget. It leaves search; history keeps it."""
        view, scope, actor = scoped(ctx, user_id, agent_id, session_id)
        return view.delete(memory_id, **scope, actor=actor, reason=reason)

    @server.tool(annotations=READ_ONLY)
    @reported
    def memory_history(
        ctx: Context[Any, Any],
        memory_id: MemoryIdArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[HistoryEvent]:
        """Every change to a memory (ADD, UPDATE, DELETE) with old and new text, oldest first."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.history(view.resolve_id(memory_id, **scope), **scope)

    register_lifecycle_tools(server, callers)
    register_graph_tools(server, callers)
    register_task_tools(server, callers)
    register_knowledge_tools(server, callers)
    register_context_tools(server, callers)
    server.close_argument_lists()
    return server


def run_stdio(memory: Memory, principal: Principal) -> None:
    """Serve MCP on stdin/stdout until the client closes it. Nothing else may write to stdout."""
    build_server(memory, local=principal).run("stdio")
