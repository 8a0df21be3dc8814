"""Scope arguments and the binding a Memory view carries (its tenant, and for scoped views its ids).

Every public call takes the scope as keyword arguments (``user_id``, ``agent_id``, ``session_id``),
as mem0 does; :class:`ScopeBinding` turns them into a validated :class:`~memstrata.types.Scope`,
adding the view's tenant and refusing ids that would leave the view.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypedDict, cast

from memstrata.errors import InvalidInputError
from memstrata.types import AdminScope, Scope, TenantScope
from memstrata.validation import guarded

SCOPE_FIELDS = ("user_id", "agent_id", "session_id")


class ScopeArgs(TypedDict, total=False):
    """The scope keyword arguments of every call (``**scope: Unpack[ScopeArgs]``)."""

    user_id: str | None
    agent_id: str | None
    session_id: str | None


class OwnerArgs(TypedDict, total=False):
    """The scope arguments of calls that name the session themselves (``sessions.context(session_id, ...)``)."""

    user_id: str | None
    agent_id: str | None


def in_session(session_id: str, owner: OwnerArgs) -> ScopeArgs:
    return cast(ScopeArgs, {**owner, "session_id": session_id})


@dataclass(frozen=True)
class ScopeBinding:
    """What a Memory view is bound to. The tenant always applies; bound ids fill in omitted arguments and
    refuse different ones, so a view made for one user can never act for another."""

    tenant_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None

    def narrowed(self, args: ScopeArgs) -> ScopeBinding:
        """A binding with more ids fixed (``memory.scoped(user_id=...)``); validated at once."""
        merged = self._merged(args)
        if not any(merged.values()):
            raise InvalidInputError("scoped() needs at least one of user_id, agent_id or session_id")
        self.scope(args)
        return replace(self, **merged)

    def scope(self, args: ScopeArgs) -> Scope:
        merged = self._merged(args)
        return guarded(lambda: Scope(tenant_id=self.tenant_id, **merged), what="scope")

    def optional_scope(self, args: ScopeArgs) -> AdminScope | None:
        """Admin calls (flush, jobs, stats) may run store-wide, but a tenant view without ids covers only its
        tenant, and a scoped view only its scope."""
        merged = self._merged(args)
        if any(merged.values()):
            return self.scope(args)
        if self.tenant_id is not None:
            return TenantScope(tenant_id=self.tenant_id)
        return None

    def covers(self, scope: Scope) -> bool:
        """True when a record owned by ``scope`` belongs to this view: its tenant, and every id the view is bound to."""
        return scope.tenant_id == self.tenant_id and all(
            getattr(self, field) in (None, getattr(scope, field)) for field in SCOPE_FIELDS
        )

    @property
    def unbound(self) -> bool:
        """The whole store: no tenant and no id (the default Memory, not a view)."""
        return self.tenant_id is None and not any(getattr(self, field) for field in SCOPE_FIELDS)

    def _merged(self, args: ScopeArgs) -> dict[str, str | None]:
        unknown = set(args) - set(SCOPE_FIELDS)
        if unknown:
            raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}; the scope is user_id, agent_id, "
                            "session_id")  # fmt: skip
        merged: dict[str, str | None] = {}
        for field in SCOPE_FIELDS:
            bound: str | None = getattr(self, field)
            given = cast(str | None, args.get(field))
            if bound is not None and given is not None and given != bound:
                raise InvalidInputError(f"this view is bound to {field}={bound!r}; it cannot act for {given!r}")
            merged[field] = bound if bound is not None else given
        return merged
