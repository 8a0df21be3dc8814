"""Keyless mode (``server.allow_anonymous_loopback``) made safe from web pages.

Without keys, "the request comes from loopback" is the only credential, and a browser on this machine is
on loopback too: any web page it shows can send requests to 127.0.0.1. Two attacks follow, and this ASGI
guard (in front of REST, MCP and the docs alike) stops both; the threat model is in docs/server.md.

- DNS rebinding: a page on ``evil.example`` re-points its own name at 127.0.0.1 and then reads and writes
  as a same-origin page. Its requests still say ``Host: evil.example``: only loopback host names are let in
  (``localhost``, ``127.0.0.1``, ``[::1]``, any port).
- Cross-site requests: a page may send a "simple" request (a form POST, a body-less POST such as
  ``/v1/users/lin/erase?confirm=true``) without asking first. Every state-changing request must carry
  ``Content-Type: application/json`` or an ``X-Memstrata-Client`` header, which a page can only send after
  a CORS preflight that this server never grants; and a request whose ``Origin`` is not loopback, or whose
  ``Sec-Fetch-Site`` says ``cross-site``, is refused outright, reads included.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from memstrata.api.auth import is_loopback
from memstrata.api.problems import problem_response

CLIENT_HEADER = "x-memstrata-client"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def host_name(host: str) -> str:
    """The name part of a Host header: ``[::1]:8765`` -> ``::1``, ``localhost:8765`` -> ``localhost``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def refusal(headers: Headers, method: str) -> tuple[int, str, str] | None:
    """Why a keyless request must be refused (status, code, detail), or None to let it through."""
    host = headers.get("host")
    if not host or not is_loopback(host_name(host)):
        return (
            403,
            "host_not_allowed",
            (
                f"Host {host!r} is not a loopback name; this keyless server answers only localhost, 127.0.0.1 and "
                "[::1] (a page that re-points its own domain at this machine must not reach it). Use one of those, "
                "or run the server with API keys"
            ),
        )
    origin = headers.get("origin")
    if origin is not None and (origin == "null" or not is_loopback(urlsplit(origin).hostname or "")):
        return (
            403,
            "cross_site_refused",
            (
                f"requests from web pages of other sites (Origin {origin}) are refused by this keyless server; "
                "call it from a program, or run the server with API keys"
            ),
        )
    if headers.get("sec-fetch-site") == "cross-site":
        return 403, "cross_site_refused", "a cross-site request from a web page; this keyless server refuses them"
    if method not in SAFE_METHODS and not is_json(headers.get("content-type")) and CLIENT_HEADER not in headers:
        return (
            415,
            "json_required",
            (
                "on a keyless server every write needs Content-Type: application/json (send {} when there is no "
                "body) or an X-Memstrata-Client header, so that no web page can send it"
            ),
        )
    return None


class BrowserGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = refusal(Headers(scope=scope), scope.get("method", "GET"))
            if refused is not None:
                status, code, detail = refused
                await problem_response(status, detail, code, instance=scope.get("path"))(scope, receive, send)
                return
        await self.app(scope, receive, send)
