"""Over stdio, a line the SDK cannot read is answered with a JSON-RPC error instead of being dropped.

The SDK's stdio transport hands such a line to the server as an ``Exception`` item, which the server only logs: a
client that sent a request holding a lone surrogate (``"\\ud800"``, which strict JSON readers refuse) or a line
that is not JSON at all waited for an answer that never came. Here the request's id is recovered with Python's
lenient ``json`` reader where the line allows, and the client gets a parse error (-32700) or an invalid request
(-32600) saying what to fix, as JSON-RPC 2.0 asks.
"""

from __future__ import annotations

import json
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from memstrata.types import string_problem

Incoming = SessionMessage | Exception
NOT_JSON_RPC = (
    'not a JSON-RPC 2.0 message: send an object with "jsonrpc": "2.0" and a "method" (a request, with an "id", '
    'or a notification), or a "result" or "error" with the "id" it answers'
)


async def serve_stdio(lowlevel: Server[Any]) -> None:
    """What the SDK's ``run_stdio_async`` does, with the unreadable lines answered."""
    async with stdio_server() as (read_stream, write_stream):
        answered = UnreadableLinesAnswered(read_stream, write_stream)
        await lowlevel.run(answered, write_stream, lowlevel.create_initialization_options())


class UnreadableLinesAnswered:
    """The transport's read stream, less its unreadable lines: each is answered on ``replies`` and skipped."""

    def __init__(self, inner: ReadStream[Incoming], replies: WriteStream[SessionMessage]) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message, which the SDK's dispatcher reads from its read stream."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Incoming:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._replies.send(SessionMessage(error_for_unreadable(item)))

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


def error_for_unreadable(problem: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a line the SDK could not read (``problem`` is what its reader raised)."""
    line = _offending_input(problem)
    try:
        message = json.loads(line) if isinstance(line, str) else line
    except (TypeError, ValueError) as exc:
        return _error(None, PARSE_ERROR, f"the line is not JSON ({exc}); send one JSON-RPC message per line")
    request_id = message.get("id") if isinstance(message, dict) else None
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        request_id = None
    broken = _broken_text(message)
    if broken:
        return _error(request_id, PARSE_ERROR, f"a string in the request {broken}")
    return _error(request_id, INVALID_REQUEST, NOT_JSON_RPC)


def _offending_input(problem: Exception) -> Any:
    if isinstance(problem, ValidationError) and problem.errors():
        return problem.errors()[0].get("input")
    return None


def _broken_text(value: Any) -> str | None:
    """Why some string inside ``value`` cannot be text (a lone surrogate, a NUL), or None."""
    if isinstance(value, str):
        return string_problem(value)
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((found for item in value if (found := _broken_text(item))), None)
    return None


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
