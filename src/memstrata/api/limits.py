"""Request size limit, as pure ASGI middleware so it covers REST and MCP alike.

A declared Content-Length over the limit is refused before the body is read. A chunked body (no
length) is counted as it streams in and cut off at the limit, so a client cannot get around the
limit by leaving the header out.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memstrata.api.problems import RequestTooLarge, StartWatch, problem_response


class BodySizeLimit:
    """``max_bytes`` for every request, except the paths in ``larger`` (POST path -> its own limit: document
    uploads, which the route streams to a file)."""

    def __init__(self, app: ASGIApp, max_bytes: int, larger: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = larger or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope["path"], self.max_bytes) if scope["method"] == "POST" else self.max_bytes
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                response = problem_response(400, "Content-Length must be a whole number of bytes", "bad_length")
                await response(scope, receive, send)
                return
            if int(declared) > limit:
                await self._too_large(limit, scope, receive, send)
                return

        received = 0
        tracked_send = StartWatch(send)

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise RequestTooLarge(limit)
            return message

        try:
            await self.app(scope, counted_receive, tracked_send)
        except RequestTooLarge:
            if tracked_send.started:  # too late for a clean answer; let the server drop the connection
                raise
            await self._too_large(limit, scope, receive, send)

    async def _too_large(self, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
        exc = RequestTooLarge(limit)
        response = problem_response(413, str(exc.detail), "too_large", instance=scope.get("path"))
        await response(scope, receive, send)
