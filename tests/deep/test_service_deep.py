"""Deep retrieval over the wire: REST (/v1/memories/search with mode, /v1/memories/search/deep, /v1/context) and
MCP (search_memory's mode, memory_context, deep_search_memory) on a real server with API keys. No chat model
is configured, so deep mode runs its offline heuristics (the model paths are covered in test_loop.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from mcp import Client
from tests.interfaces.service_support import Service, run, service, structured

from memstrata.providers.use_embedder import UniversalSentenceEncoder

CHATTY = "ugh, long week. anyway, quick question: which db engine do we use?"


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    with service(Path(tmp_path_factory.mktemp("deep-service")), embedder) as running:
        memory = running.memory.for_tenant("acme")
        memory.add("We use PostgreSQL 16 with pgvector.", key="project:db:engine", user_id="u1")
        memory.add(["Caroline painted a sunset over the lake.", "Bob works as a nurse."], user_id="u1")
        running.memory.for_tenant("globex").add("Globex runs Oracle.", key="project:db:engine", user_id="u1")
        yield running


def post(svc: Service, path: str, token: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{svc.url}{path}", json=body, headers=svc.auth(token), timeout=60)


def test_rest_search_modes_and_deep_trace(svc: Service) -> None:
    token = svc.token("acme", users=["u1"])
    fast = post(svc, "/v1/memories/search", token, {"query": "what did Caroline paint?"})
    deep = post(svc, "/v1/memories/search", token, {"query": "what did Caroline paint?", "mode": "deep"})
    assert fast.status_code == deep.status_code == 200
    assert deep.json()[0]["memory"]["text"] == "Caroline painted a sunset over the lake."
    bad = post(svc, "/v1/memories/search", token, {"query": "x", "mode": "slow"})
    assert bad.status_code == 422
    traced = post(svc, "/v1/memories/search/deep", token, {"query": CHATTY, "audience": "agent"})
    assert traced.status_code == 200
    trace = traced.json()["trace"]
    assert trace["understanding"]["question"] == "which db engine do we use?" and trace["model_calls"] == 0
    assert trace["max_rounds"] == 5


def test_rest_context_is_budgeted_cited_and_tenant_bound(svc: Service) -> None:
    token = svc.token("acme", users=["u1"])
    response = post(svc, "/v1/context", token, {"query": "which db engine?", "budget_tokens": 300})
    assert response.status_code == 200, response.text
    body = response.json()
    assert "PostgreSQL 16" in body["text"] and "Oracle" not in body["text"]
    assert body["tokens"] <= 300 and body["facts"][0]["named"] is True
    assert body["citations"] == [m["memory_id"] for m in body["facts"] + body["memories"]]
    other = post(svc, "/v1/context", svc.token("acme", users=["u2"]), {"query": "x", "user_id": "u1"})
    assert other.status_code == 403
    assert post(svc, "/v1/context", token, {"query": "x", "budget_tokens": 10}).status_code == 422
    assert httpx.post(f"{svc.url}/v1/context?foo=1", json={"query": "x"}, headers=svc.auth(token)).status_code == 422


def test_mcp_context_and_deep_tools(svc: Service) -> None:
    token = svc.token("acme", users=["u1"])

    async def session(client: Client) -> dict[str, Any]:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        return {
            "tools": tools,
            "context": structured(await client.call_tool("memory_context", {"query": "which db engine?"})),
            "deep": structured(await client.call_tool("deep_search_memory", {"query": CHATTY})),
            "search": structured(await client.call_tool("search_memory", {"query": CHATTY, "mode": "deep"})),
        }

    out = run(session, f"{svc.url}/mcp", headers=svc.auth(token))
    assert out["tools"]["memory_context"].annotations.read_only_hint is True
    assert "mode" in out["tools"]["search_memory"].input_schema["properties"]
    assert "PostgreSQL 16" in out["context"]["text"] and out["context"]["citations"]
    assert out["deep"]["hits"][0]["memory"]["text"] == "We use PostgreSQL 16 with pgvector."
    assert out["search"][0]["memory"]["id"] == out["deep"]["hits"][0]["memory"]["id"]


def test_context_and_search_travel_in_time_over_rest_and_mcp(svc: Service) -> None:
    """/v1/context, memory_context and search_memory took no as_of: an agent could not ask what held at a time. The
    fixture's memories were stored today, so as of 2000 none of them held."""
    token = svc.token("acme", users=["u1"])
    then = post(svc, "/v1/context", token, {"query": "which db engine?", "as_of": "2000-01-01"})
    assert then.status_code == 200, then.text
    assert then.json()["facts"] == [] and "PostgreSQL" not in then.json()["text"]
    assert post(svc, "/v1/context", token, {"query": "x", "as_of": "someday"}).status_code == 422

    async def session(client: Client) -> dict[str, Any]:
        long_ago = {"as_of": "2000-01-01"}
        return {
            "context": structured(await client.call_tool("memory_context", {"query": "which db engine?", **long_ago})),
            "search": structured(await client.call_tool("search_memory", {"query": "db engine", **long_ago})),
            "now": structured(await client.call_tool("search_memory", {"query": "db engine"})),
        }

    out = run(session, f"{svc.url}/mcp", headers=svc.auth(token))
    assert out["context"]["facts"] == [] and "PostgreSQL" not in out["context"]["text"]
    assert out["search"] == [] and out["now"][0]["memory"]["text"] == "We use PostgreSQL 16 with pgvector."
