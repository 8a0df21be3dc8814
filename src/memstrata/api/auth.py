"""Turning a request's credentials into a Principal, for REST (a dependency) and MCP (an ASGI guard).

Keys travel as ``Authorization: Bearer msk_...``. Without a key a request is refused, unless the
server was explicitly started with ``server.allow_anonymous_loopback`` on a loopback host and the
request itself comes from loopback; it then acts as the default tenant with every scope, like the
local CLI does.
"""

from __future__ import annotations

import ipaddress

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from memstrata.api.keys import KeyStore
from memstrata.api.principal import Principal, Unauthenticated
from memstrata.api.problems import auth_headers, problem_response

ANONYMOUS = Principal(tenant_id=None)
PRINCIPAL_STATE = "memstrata_principal"  # key in the ASGI scope's state, read by the MCP tools


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Authenticator:
    def __init__(self, keys: KeyStore | None, *, allow_anonymous_loopback: bool = False) -> None:
        self.keys = keys
        self.allow_anonymous_loopback = allow_anonymous_loopback

    def resolve(self, authorization: str | None, client_host: str | None) -> Principal:
        if authorization:
            scheme, _, token = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise Unauthenticated("send the API key as 'Authorization: Bearer msk_...'")
            key = self.keys.verify(token.strip()) if self.keys is not None else None
            if key is None:
                raise Unauthenticated(
                    "this API key is unknown or revoked; create one with `memstrata keys create --tenant NAME`"
                )
            return key.principal()
        if self.allow_anonymous_loopback and client_host is not None and is_loopback(client_host):
            return ANONYMOUS
        raise Unauthenticated(
            "this server needs an API key: send 'Authorization: Bearer msk_...' "
            "(create one with `memstrata keys create --tenant NAME`)"
        )


class McpAuthGuard:
    """Wraps the MCP endpoint: same keys and tenancy as REST, the principal handed on in the ASGI scope."""

    def __init__(self, app: ASGIApp, auth: Authenticator) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") != "POST":
            # Stateless JSON mode answers each POST and keeps nothing: no server-sent event stream for GET (the SDK
            # would hold one open, and each such stream held a request slot: 32 of them shut the service) and no
            # session for DELETE to end. The MCP spec's answer is 405.
            response = problem_response(
                405, "this MCP endpoint takes POST only (stateless, JSON responses)", "method_not_allowed",
                instance=scope.get("path"), headers={"Allow": "POST"},
            )  # fmt: skip
            await response(scope, receive, send)
            return
        if scope["type"] == "http":
            client = scope.get("client")
            try:
                principal = self.auth.resolve(Headers(scope=scope).get("authorization"), client[0] if client else None)
            except Unauthenticated as exc:
                response = problem_response(
                    401, str(exc), "unauthenticated", instance=scope.get("path"), headers=auth_headers(401)
                )
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        await self.app(scope, receive, send)
