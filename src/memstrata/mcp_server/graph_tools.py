"""MCP tools for graph memory: what an agent needs to reason over people and things around the user.
Merging entities is left to people (REST, CLI)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from memstrata.api.graph_routes import EdgeOut, GraphOut
from memstrata.mcp_server.common import READ_ONLY, AgentId, Callers, SessionId, UserId, reported

EntityArg = Annotated[str, Field(min_length=1, max_length=200, description="entity name, alias or id")]


def register_graph_tools(server: MCPServer, callers: Callers) -> None:
    scoped = callers.scoped

    @server.tool(annotations=READ_ONLY)
    @reported
    def graph_neighbors(
        ctx: Context[Any, Any],
        entity: EntityArg,
        hops: Annotated[int, Field(ge=1, le=6)] = 2,  # as REST
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> GraphOut:
        """Who and what is connected to an entity ("if Zhang is out, what is blocked?"): the current relations
        within ``hops``, with the entities they touch."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return GraphOut.of(view.graph.neighbors(entity, hops=hops, **scope))

    @server.tool(annotations=READ_ONLY)
    @reported
    def graph_relation_history(
        ctx: Context[Any, Any],
        entity: EntityArg,
        relation: Annotated[str | None, Field(description="e.g. lives_in; all relations when left out")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[EdgeOut]:
        """Every relation of an entity, current and closed (valid_to), oldest first: "where did I live before?"."""
        view, scope, _ = scoped(ctx, user_id, agent_id, session_id)
        return [EdgeOut.of(edge) for edge in view.graph.relation_history(entity, relation, **scope)]
