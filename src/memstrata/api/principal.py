"""Who is calling and what they may touch: a tenant plus the user / agent ids a key allows.

Both the REST API and MCP resolve every request to a :class:`Principal` and ask it for the scope
to pass to ``Memory``. The tenant is enforced by the store (``Memory.for_tenant``); the allowed
user / agent ids are checked here, before Memory is called, because the store only knows scopes.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from memstrata.facade.scoping import ScopeArgs
from memstrata.memory import Memory


class Unauthenticated(Exception):
    """No credentials, or credentials that do not match a live key (HTTP 401)."""


class AccessDenied(Exception):
    """A valid key asked for a scope outside the ones it allows (HTTP 403)."""


@dataclass(frozen=True)
class Principal:
    """A resolved caller. ``None`` id sets mean "every id of this tenant"."""

    tenant_id: str | None
    user_ids: frozenset[str] | None = None
    agent_ids: frozenset[str] | None = None
    key_id: str | None = None  # None: anonymous loopback, or a local stdio process

    @property
    def restricted(self) -> bool:
        return self.user_ids is not None or self.agent_ids is not None

    def memory(self, memory: Memory) -> Memory:
        """The Memory view this caller works through: every store query carries its tenant."""
        return memory.for_tenant(self.tenant_id)

    def bound(self, view: Memory, scope: ScopeArgs) -> Memory:
        """``view`` (from :meth:`memory`) bound to the ids of ``scope`` (from :meth:`scope`) that this key limits,
        so no call made through it can widen past them: ``context()`` reads a user's memories from every agent,
        and an agent-limited key read the other agents' memories through it (a user trial)."""
        limited: ScopeArgs = {}
        if self.user_ids is not None and scope.get("user_id") is not None:
            limited["user_id"] = scope.get("user_id")
        if self.agent_ids is not None and scope.get("agent_id") is not None:
            limited["agent_id"] = scope.get("agent_id")
        return view.scoped(**limited) if limited else view

    def scope(self, user_id: str | None, agent_id: str | None, session_id: str | None) -> ScopeArgs:
        """The scope a request may use. A key bound to exactly one user (or agent) fills it in when omitted.

        A restricted dimension must be given and allowed: a key for user ``alice`` that asked only for
        ``agent_id=bot`` would otherwise read every user's memories of that agent.
        """
        user_id = _checked("user_id", user_id, self.user_ids, keyed=self.key_id is not None)
        agent_id = _checked("agent_id", agent_id, self.agent_ids, keyed=self.key_id is not None)
        return {"user_id": user_id, "agent_id": agent_id, "session_id": session_id}

    def describe(self) -> dict[str, object]:
        return {
            "key_id": self.key_id,
            "tenant_id": self.tenant_id,
            "user_ids": sorted(self.user_ids) if self.user_ids is not None else "all",
            "agent_ids": sorted(self.agent_ids) if self.agent_ids is not None else "all",
        }


def _checked(field: str, value: str | None, allowed: Set[str] | None, *, keyed: bool) -> str | None:
    """``keyed``: the limit comes from an API key; else from a local process's own options (``memstrata mcp
    --user``), which holds no key, so the error must not send its user to one."""
    if allowed is None:
        return value
    if value is not None:
        value = value.strip()  # as the store reads scope ids ("alice " is alice): the key allows what it reads
    if value is None and len(allowed) == 1:
        return next(iter(allowed))
    who = "this API key" if keyed else f"this server (started with --{field.removesuffix('_id')})"
    if value is None:
        raise AccessDenied(f"{who} is limited to {field} in {sorted(allowed)}; pass one of them as {field}")
    if value not in allowed:
        remedy = "a key created for this id (`memstrata keys create`)" if keyed else "a server started for this id"
        raise AccessDenied(
            f"{who} may not use {field}={value!r}; it is limited to {sorted(allowed)}. Use one of those, or {remedy}"
        )
    return value
