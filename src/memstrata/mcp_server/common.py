"""What every MCP tool shares: finding the caller, its scope and Memory view, and reporting errors."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ParamSpec, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from memstrata.api.auth import PRINCIPAL_STATE
from memstrata.api.principal import AccessDenied, Principal, Unauthenticated
from memstrata.errors import MemstrataError
from memstrata.facade.scoping import ScopeArgs
from memstrata.memory import Memory
from memstrata.validation import describe_validation_error

P = ParamSpec("P")
R = TypeVar("R")

UserId = Annotated[str | None, Field(description="the user the memory belongs to (may be preset by the key)")]
AgentId = Annotated[str | None, Field(description="the agent the memory belongs to, if agent-specific")]
SessionId = Annotated[str | None, Field(description="a conversation or session id, for short-lived memories")]
MemoryIdArg = Annotated[str, Field(description="a memory id, as returned by add_memory or search_memory")]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def writes(title: str, *, destructive: bool, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


def reported(tool: Callable[P, R]) -> Callable[P, R]:
    """Our errors reach the agent as the tool's error text (they say what to do); anything else stays a
    crash, which the SDK logs and reports without its text."""

    @functools.wraps(tool)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return tool(*args, **kwargs)
        except (MemstrataError, AccessDenied, Unauthenticated) as exc:
            raise ToolError(str(exc)) from exc
        except ValidationError as exc:  # a value the tool's own models refuse ("kinds": ["BAD KIND"])
            raise ToolError(f"invalid arguments: {describe_validation_error(exc)}") from None

    return run


@dataclass(frozen=True)
class Callers:
    """Resolves the principal of a tool call: from the HTTP request (set by the API-key guard) or, over
    stdio, the local process's own."""

    memory: Memory
    local: Principal | None = None

    def principal(self, ctx: Context[Any, Any]) -> Principal:
        request = ctx.request_context.request
        state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
        principal = state.get(PRINCIPAL_STATE, self.local)
        if not isinstance(principal, Principal):
            raise Unauthenticated("no API key on this MCP request; send 'Authorization: Bearer msk_...'")
        return principal

    def scoped(
        self, ctx: Context[Any, Any], user_id: str | None, agent_id: str | None, session_id: str | None
    ) -> tuple[Memory, ScopeArgs, str]:
        """The caller's Memory view, its checked scope, and the actor recorded in history."""
        principal = self.principal(ctx)
        scope = principal.scope(user_id, agent_id, session_id)
        view = principal.bound(principal.memory(self.memory), scope)
        return view, scope, f"mcp:{principal.key_id or 'local'}"
