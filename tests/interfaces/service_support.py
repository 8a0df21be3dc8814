"""Helpers for the service tests: a real uvicorn server on a free loopback port, in a thread."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx2
import uvicorn
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memstrata import Memory
from memstrata.api.keys import KeyStore
from memstrata.config import ServerSettings, load_settings
from memstrata.providers.protocol import Embedder
from memstrata.service.app import create_app, uvicorn_options
from memstrata.storage.sqlite.store import SQLiteStore

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(app: FastAPI, *, http: str = "auto") -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 until the block ends; yields the base URL. ``http``: uvicorn's HTTP parser."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on", http=http,
                            **uvicorn_options())  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass
class Service:
    url: str
    memory: Memory
    keys: KeyStore

    def token(self, tenant: str, *, users: list[str] | None = None, agents: list[str] | None = None) -> str:
        return self.keys.create(tenant, user_ids=users, agent_ids=agents)[1]

    @staticmethod
    def auth(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}


def new_memory(path: Path, embedder: Embedder) -> Memory:
    return Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))


@contextmanager
def service(directory: Path, embedder: Embedder, **server: object) -> Iterator[Service]:
    """A fresh store, key file and server; ``server`` overrides ServerSettings fields."""
    directory.mkdir(parents=True, exist_ok=True)
    memory = new_memory(directory / "memstrata.db", embedder)
    keys = KeyStore(directory / "keys.db")
    try:
        with running(create_app(memory, ServerSettings.model_validate(server), keys=keys)) as url:
            yield Service(url, memory, keys)
    finally:
        keys.close()
        memory.close()


def run(session: Callable[[Client], Awaitable[T]], server: Any, *, headers: dict[str, str] | None = None) -> T:
    async def main() -> T:
        if isinstance(server, str):
            async with (
                httpx2.AsyncClient(headers=headers, timeout=60) as http,
                Client(streamable_http_client(server, http_client=http)) as client,
            ):
                return await session(client)
        async with Client(server) as client:
            return await session(client)

    return asyncio.run(main())


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    data = result.structured_content
    return data["result"] if isinstance(data, dict) and set(data) == {"result"} else data
