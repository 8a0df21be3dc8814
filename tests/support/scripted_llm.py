"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests.

It is a stand-in at the HTTP boundary only: it answers queued, fixed replies (no model behind
it) and records every request, so parsing, retries, timeouts and decision logic run over real
HTTP through the real client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is
    delay_s: float = 0.0
    respond: Callable[[dict[str, Any]], Reply] | None = None  # computes the reply from the request


def completion(
    content: str | dict[str, Any], prompt_tokens: int | None = 7, completion_tokens: int | None = 3
) -> Reply:
    """A chat completion reply; ``prompt_tokens=None`` leaves usage out, as some servers do."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    body: dict[str, Any] = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}
    if prompt_tokens is not None:
        body["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    return Reply(200, body)


class ScriptedServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.released = threading.Event()  # ends slow replies early at teardown
        self.default: Callable[[dict[str, Any]], Reply] | None = None  # answers when the queue is empty
        self._lock = threading.Lock()
        script = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                with script._lock:
                    script.requests.append({"path": self.path, **json.loads(self.rfile.read(length))})
                    script.headers.append(dict(self.headers))
                    request = script.requests[-1]
                    if script.replies:
                        reply = script.replies.pop(0)
                    elif script.default is not None:
                        reply = Reply(respond=script.default)
                    else:
                        reply = Reply(500, "script exhausted")
                if reply.respond is not None:
                    reply = reply.respond(request)
                if reply.delay_s:
                    script.released.wait(reply.delay_s)
                payload = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        # serve_forever checks for shutdown() between polls: at its default 0.5 s every test using the server
        # waited up to half a second at teardown (31 s of the decision set's 47)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def answer_with(self, respond: Callable[[dict[str, Any]], Reply]) -> None:
        """Compute every reply from its request once the queued replies are used up (an oracle model)."""
        self.default = respond

    def user_prompts(self) -> list[str]:
        return [request["messages"][-1]["content"] for request in self.requests]

    @contextmanager
    def running(self) -> Iterator[ScriptedServer]:
        self._thread.start()
        try:
            yield self
        finally:
            self.released.set()
            self._server.shutdown()
            self._server.server_close()
