"""Overload gives a fast 503 with Retry-After, never a queue that grows: the middleware in front of a slow app."""

from __future__ import annotations

import asyncio

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from memstrata.api.overload import OverloadGuard


def slow_app(release: asyncio.Event) -> Starlette:
    async def work(request: Request) -> PlainTextResponse:
        await release.wait()
        return PlainTextResponse("done")

    async def health(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    return Starlette(routes=[Route("/work", work), Route("/health", health)])


def test_requests_beyond_the_queue_get_503_with_retry_after_at_once() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        guard = OverloadGuard(slow_app(release), max_active=2, max_waiting=2, max_wait_s=30, retry_after_s=3)
        transport = httpx.ASGITransport(app=guard)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            admitted = [asyncio.create_task(client.get("/work")) for _ in range(4)]  # 2 run, 2 wait
            await asyncio.sleep(0.1)
            refused = await asyncio.wait_for(client.get("/work"), 2)  # answered without waiting for a slot
            assert refused.status_code == 503 and refused.headers["retry-after"] == "3"
            assert refused.json()["code"] == "overloaded"
            assert (await client.get("/health")).status_code == 200  # probes never queue
            release.set()
            assert [r.status_code for r in await asyncio.gather(*admitted)] == [200] * 4
        assert guard.refused == 1 and guard.waiting == 0

    asyncio.run(scenario())


def test_a_wait_that_runs_out_is_a_503_not_a_slow_answer() -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        guard = OverloadGuard(slow_app(release), max_active=1, max_waiting=10, max_wait_s=0.2, retry_after_s=1)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=guard), base_url="http://test") as client:
            running = asyncio.create_task(client.get("/work"))
            await asyncio.sleep(0.05)
            started = asyncio.get_running_loop().time()
            waited = await client.get("/work")
            assert waited.status_code == 503 and asyncio.get_running_loop().time() - started < 1.5
            release.set()
            assert (await running).status_code == 200
            assert (await client.get("/work")).status_code == 200  # the slot came back

    asyncio.run(scenario())
