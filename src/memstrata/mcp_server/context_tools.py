"""MCP tools for deep retrieval: ``memory_context`` (what to read before answering, under a token budget) and
``deep_search_memory`` (deep search with its trace)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from memstrata.deep.context_model import MemoryContext
from memstrata.deep.search import DeepResult
from memstrata.mcp_server.common import READ_ONLY, AgentId, Callers, SessionId, UserId, reported

QueryArg = Annotated[str, Field(min_length=1, description="the user's message or question, in any language")]
ModeArg = Annotated[
    Literal["fast", "deep"],
    Field(description="deep: understand, expand and re-search the query with the model (slower, finds more)"),
]


AsOfArg = Annotated[
    datetime | None, Field(description="time travel: answer as of this time (ISO 8601, e.g. 2025-03-01)")
]


def register_context_tools(server: MCPServer, callers: Callers) -> None:
    scoped = callers.scoped

    @server.tool(annotations=READ_ONLY)
    @reported
    def memory_context(
        ctx: Context[Any, Any],
        query: QueryArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        budget_tokens: Annotated[int, Field(ge=64, le=1_000_000, description="most tokens of text returned")] = 2000,
        mode: ModeArg = "fast",
        as_of: AsOfArg = None,
    ) -> MemoryContext:
        """Everything to read before answering, as one text within budget_tokens: the rules (follow them), key
        facts, the user's standing facts (allergies, diet, home, work, family), relevant memories with dates and
        source turns, and this session's recent turns. Cite memories by
        the [id] shown; the ids are in citations. as_of: what held at that time instead of now."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.context(query, **scope, budget_tokens=budget_tokens, mode=mode, audience="agent", as_of=as_of)

    @server.tool(annotations=READ_ONLY)
    @reported
    def deep_search_memory(
        ctx: Context[Any, Any],
        query: QueryArg,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="how many hits")] = 10,
    ) -> DeepResult:
        """Search harder when search_memory found nothing useful: the question is understood, expanded and
        searched again until an evaluator is satisfied. Returns the hits and the trace of how they were found."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return view.deep_search(query, **scope, limit=limit, audience="agent")
