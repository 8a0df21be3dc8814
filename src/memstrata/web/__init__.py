"""The web console: static HTML, CSS and ES modules shipped in the package, served by ``memstrata serve``.

``/`` answers the console's page and ``/console/...`` its assets. The page talks to the documented REST API
only (``/v1``), from the same origin. A strict Content-Security-Policy (``default-src 'self'``) is part of
the design: the console loads nothing from elsewhere and the browser refuses any request that would leave
the server, so a person can open it on a machine without internet and a bug cannot leak memories to a CDN.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONSOLE_PATH = "/console"
STATIC_DIR = Path(str(files("memstrata.web") / "static"))
# Everything from this origin, nothing from anywhere else; no inline script or style, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class ConsoleHeaders:
    """Adds the security headers to the console's own responses (the page and its assets)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != "/" and not path.startswith(CONSOLE_PATH + "/"):
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def install_console(app: FastAPI) -> None:
    """Serve the console at ``/`` with its assets under ``/console`` (not part of the OpenAPI document)."""
    index = STATIC_DIR / "index.html"

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def console_page() -> FileResponse:
        return FileResponse(index, media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-cache"})

    app.mount(CONSOLE_PATH, StaticFiles(directory=STATIC_DIR), name="console")
    app.add_middleware(ConsoleHeaders)
