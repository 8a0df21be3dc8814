"""The service: one ASGI app with the REST API under /v1, MCP at /mcp, health, readiness and /docs.

``create_app`` takes a ready Memory (tests inject one; ``memstrata serve`` builds it from the
configuration) and does not own it: whoever made the Memory closes it.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from fastapi import Depends, FastAPI, Request
from starlette.routing import Route

from memstrata.api import (
    console_routes,
    context_routes,
    docs,
    graph_routes,
    knowledge_routes,
    lifecycle_routes,
    problems,
    routes,
    task_routes,
    vault_routes,
)
from memstrata.api.auth import Authenticator, McpAuthGuard, is_loopback
from memstrata.api.browser_guard import BrowserGuard
from memstrata.api.keys import KeyStore
from memstrata.api.limits import BodySizeLimit
from memstrata.api.models import Health, Readiness
from memstrata.api.overload import OverloadGuard
from memstrata.api.query_batches import QueryBatches
from memstrata.api.strict_query import check_body, reject_unknown_query
from memstrata.config import ServerSettings
from memstrata.errors import EmbeddingMismatchError, InvalidInputError
from memstrata.mcp_server.server import build_server
from memstrata.memory import Memory
from memstrata.patterns import compile_all
from memstrata.providers.protocol import embedding_identity
from memstrata.read.english_words import english_words
from memstrata.vault import Vault
from memstrata.vault.watch import VaultWatcher
from memstrata.web import install_console

DESCRIPTION = """\
Long-term memory for LLM agents. Every request needs `Authorization: Bearer <API key>`
(`memstrata keys create --tenant NAME`); a key reaches only its tenant's memories, and only the
user / agent ids it was created for. Every call names a scope: at least one of `user_id`, `agent_id`,
`session_id` (422 without one; a key bound to a single user or agent fills it in). Errors are RFC 9457
problem details with a `detail` that says what to do and a stable `code`. MCP (streamable HTTP) is served
at `/mcp` with the same keys.
"""


# The longest request head (request line and headers) the HTTP server reads. With h11 (uvicorn without httptools)
# the default, 16 KiB, answered a valid query string over it with a plain-text 400 before the app saw it; httptools
# parses URLs up to 64 KB. Every query parameter is bounded so a valid URL stays under 64 KB (free text: 4,000
# characters, up to 12 bytes each percent-encoded); over-long values then reach validation and get a 422 problem
# document like any other invalid value.
MAX_REQUEST_HEAD_BYTES = 512 * 1024


def uvicorn_options(server: ServerSettings | None = None) -> dict[str, Any]:
    """Settings for the uvicorn server that runs :func:`create_app` (``memstrata serve`` and the tests)."""
    return {
        "access_log": server.access_log if server is not None else False,
        "h11_max_incomplete_event_size": MAX_REQUEST_HEAD_BYTES,
        # Keep-alive longer than clients' idle expiry (httpx: 5 s, like uvicorn's default): with equal timeouts a
        # client may reuse a connection the server is closing, and its request fails with a read error.
        "timeout_keep_alive": 30,
    }


def ready_to_serve(memory: Memory) -> None:
    """In a process that serves (``memstrata serve``, each worker), before its port opens: the embedder's weights read
    and the text rules compiled, so no first request waits for them; then what start-up made (modules, the app, the
    model's tables), which lives as long as the process, frozen: the cyclic collector stops walking it on every full
    collection, a pause some request paid for (50 clients, 2 workers: p95 ~106 against ~118 ms,
    bench/results/2026-12-06-service-gc-freeze-*.md)."""
    load = getattr(memory.embedder, "load", None)
    if callable(load):
        load()
    compile_all()  # the text rules' patterns, deferred in short-lived processes (memstrata/patterns.py)
    english_words()  # the word list spelling reads
    gc.collect()
    gc.freeze()


def _version() -> str:
    try:
        return version("memstrata")
    except PackageNotFoundError:  # running from a source tree that was not installed
        return "0"


def _vault_watcher(memory: Memory) -> VaultWatcher | None:
    """With ``[vault] path`` and ``watch`` set, notes a person edits while the service runs are re-indexed."""
    settings = memory.settings.vault
    if settings.path is None or not settings.watch:
        return None
    return VaultWatcher(Vault(memory.for_tenant(settings.tenant_id), settings)).start()


def create_app(memory: Memory, server: ServerSettings | None = None, *, keys: KeyStore | None = None,
               watch_vault: bool = True) -> FastAPI:  # fmt: skip
    """Build the service around ``memory``. ``keys`` may be None only for anonymous loopback use. ``watch_vault``:
    whether this process runs the vault watcher [vault] asks for (one worker of several does)."""
    server = server or memory.settings.server
    if server.allow_anonymous_loopback and not is_loopback(server.host):
        raise InvalidInputError(
            f"server.allow_anonymous_loopback needs a loopback host, not {server.host!r}; "
            "bind to 127.0.0.1, or turn it off and use API keys"
        )
    if keys is None and not server.allow_anonymous_loopback:
        raise InvalidInputError("the server needs a KeyStore, unless server.allow_anonymous_loopback is on")
    auth = Authenticator(keys, allow_anonymous_loopback=server.allow_anonymous_loopback)
    mcp = build_server(memory)
    # Stateless JSON mode: no per-client session lives in this process, so any replica can answer any
    # request and nothing needs expiring; the memory tools never push notifications anyway.
    mcp_app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=server.max_request_bytes,
        host=server.host,  # on loopback the SDK also checks Host / Origin against DNS rebinding
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        memory.jobs.start_worker()  # jobs queued in the shared store before this process started run here too
        watcher = _vault_watcher(memory) if watch_vault else None
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            if watcher is not None:
                watcher.stop()

    app = FastAPI(title="memstrata", version=_version(), description=DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None)  # fmt: skip
    app.state.memory = memory
    app.state.query_batches = QueryBatches()
    app.state.auth = auth
    problems.install(app)
    docs.install(app)
    routers = (routes.router, lifecycle_routes.router, graph_routes.router, vault_routes.router,
               task_routes.router, console_routes.router, knowledge_routes.router, context_routes.router)  # fmt: skip
    for router in routers:
        app.include_router(router, dependencies=[Depends(reject_unknown_query), Depends(check_body)])
    install_console(app)  # the web console at / (static assets under /console)

    @app.get("/health", response_model=Health, tags=["service"])
    def health() -> Health:
        """Liveness: the process answers. No key needed."""
        return Health(status="ok")

    @app.get("/ready", response_model=Readiness, tags=["service"], responses=routes.ERRORS)
    def ready(request: Request) -> Readiness:
        """Readiness: the store answers a query and the embedder matches the stored vectors. No key needed."""
        ready_memory: Memory = request.app.state.memory
        stored = ready_memory.store.embedding_id()  # a StoreError here answers 503
        configured = embedding_identity(ready_memory.embedder)
        if stored is not None and stored != configured:
            raise EmbeddingMismatchError(stored=stored, configured=configured)  # 503 with what to do
        return Readiness(status="ready", embedder=configured, stored_embedding=stored)

    for path, probe in (("/health", health), ("/ready", ready)):  # uptime monitors probe with HEAD (405: down)
        app.add_api_route(path, probe, methods=["HEAD"], include_in_schema=False)

    for route in mcp_app.routes:
        assert isinstance(route, Route)
        app.router.routes.append(Route(route.path, endpoint=McpAuthGuard(route.app, auth), include_in_schema=False))
    upload_bytes = int(memory.settings.ingest.max_upload_mb * 1024 * 1024)  # the upload route checks it again
    app.add_middleware(BodySizeLimit, max_bytes=server.max_request_bytes, larger={"/v1/knowledge": upload_bytes})
    # Added after the size limit, so it runs before it: an overloaded service refuses before reading a body.
    app.add_middleware(OverloadGuard, max_active=server.max_active_requests, max_waiting=server.max_waiting_requests,
                       max_wait_s=server.max_wait_s, retry_after_s=server.retry_after_s)  # fmt: skip
    if server.allow_anonymous_loopback:
        app.add_middleware(BrowserGuard)  # added last: it runs first, before any body is read
    return app
