"""Graph memory over REST and MCP: neighbourhoods, paths, relation history, exports, scoped by the API key."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from mcp import Client
from service_support import Service, run, structured


@pytest.fixture(scope="module")
def client(svc: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=svc.url, headers=svc.auth(svc.token("graph")), timeout=60) as http:
        turns = ["王总的太太是李女士", "王总喜欢红酒", "我住在北京", "我搬到上海了"]
        body = {
            "user_id": "g1",
            "messages": [{"role": "user", "content": t} for t in turns],
            "infer": True,
            "wait": True,
        }
        response = http.post("/v1/memories", json=body)
        assert response.status_code == 201, response.text
        yield http


def test_graph_over_rest(client: httpx.Client) -> None:
    names = {e["name"] for e in client.get("/v1/graph/entities", params={"user_id": "g1"}).json()}
    assert {"王总", "李女士", "红酒", "北京", "上海"} <= names
    near = client.get("/v1/graph/neighbors", params={"user_id": "g1", "entity": "李女士", "hops": 2}).json()
    assert {r["relation"] for r in near["relations"]} == {"spouse_of", "likes"}
    chain = client.get("/v1/graph/path", params={"user_id": "g1", "source": "李女士", "target": "红酒"}).json()
    assert [(e["source"], e["relation"], e["target"]) for e in chain] == [
        ("王总", "spouse_of", "李女士"), ("王总", "likes", "红酒")
    ]  # fmt: skip
    homes = client.get("/v1/graph/relations", params={"user_id": "g1", "entity": "我", "relation": "lives_in"}).json()
    assert [(e["target"], e["record"]["valid_to"] is None) for e in homes] == [("北京", False), ("上海", True)]
    mermaid = client.get("/v1/graph/export", params={"user_id": "g1", "format": "mermaid"})
    assert mermaid.status_code == 200 and mermaid.text.startswith("graph LR")
    missing = client.get("/v1/graph/neighbors", params={"user_id": "g1", "entity": "赵总"})
    assert missing.status_code == 404 and "no entity named" in missing.json()["detail"]
    assert client.get("/v1/graph/export", params={"user_id": "g1", "format": "dot"}).status_code == 422


def test_graph_is_scoped_by_the_key(svc: Service, client: httpx.Client) -> None:
    other = svc.auth(svc.token("graph", users=["g2"]))
    denied = httpx.get(f"{svc.url}/v1/graph/entities", params={"user_id": "g1"}, headers=other)
    assert denied.status_code == 403
    other_tenant = svc.auth(svc.token("elsewhere"))
    empty = httpx.get(f"{svc.url}/v1/graph/entities", params={"user_id": "g1"}, headers=other_tenant)
    assert empty.status_code == 200 and empty.json() == []


def test_graph_tools_over_mcp(svc: Service, client: httpx.Client) -> None:
    async def session(mcp: Client) -> dict[str, Any]:
        near = structured(await mcp.call_tool("graph_neighbors", {"entity": "王总", "user_id": "g1"}))
        homes = structured(
            await mcp.call_tool("graph_relation_history", {"entity": "我", "relation": "lives_in", "user_id": "g1"})
        )
        return {"near": near, "homes": homes}

    out = run(session, f"{svc.url}/mcp", headers=svc.auth(svc.token("graph")))
    assert {r["relation"] for r in out["near"]["relations"]} == {"spouse_of", "likes"}
    assert [e["target"] for e in out["homes"]] == ["北京", "上海"]
