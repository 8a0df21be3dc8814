"""Lifecycle over REST and MCP: review, archive / restore, forget, erase, sessions, consolidation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from mcp import Client
from service_support import Service, run, structured

from memstrata.storage.protocol import StatusChange, WriteBatch
from memstrata.types import MemoryStatus, utcnow


@pytest.fixture(scope="module")
def client(svc: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=svc.url, headers=svc.auth(svc.token("life")), timeout=60) as http:
        yield http


def add(client: httpx.Client, user: str, *texts: str) -> list[str]:
    response = client.post("/v1/memories", json={"user_id": user, "text": list(texts)})
    assert response.status_code == 201, response.text
    return [event["id"] for event in response.json()["results"]]


def make_pending(svc: Service, user: str, memory_id: str) -> None:
    """Pending memories come from low-confidence extraction; flip one directly to test the review endpoints."""
    item = svc.memory.for_tenant("life").get(memory_id, user_id=user)
    svc.memory.store.write(
        WriteBatch(status_changes=[StatusChange(item.id, item.scope, MemoryStatus.PENDING, utcnow())])
    )


def test_review_confirm_reject(svc: Service, client: httpx.Client) -> None:
    scope = {"user_id": "rev"}
    keep, drop = add(client, "rev", "Works at a bakery", "Owns a boat")
    for memory_id in (keep, drop):
        make_pending(svc, "rev", memory_id)
    assert {item["id"] for item in client.get("/v1/review", params=scope).json()} == {keep, drop}
    assert client.post(f"/v1/memories/{keep}/confirm", params=scope).json()["status"] == "active"
    assert client.post(f"/v1/memories/{drop}/reject", params=scope).json()["status"] == "deleted"
    again = client.post(f"/v1/memories/{keep}/confirm", params=scope)
    assert again.status_code == 409 and "not pending" in again.json()["detail"]


def test_an_operation_without_a_body_refuses_one(client: httpx.Client) -> None:
    """archive with {"bogus_field": 1} archived (200) and dropped the field; restore took "garbage" as JSON."""
    scope = {"user_id": "nobody-body"}
    [memory_id] = add(client, "nobody-body", "Keeps a spare key under the mat")
    bogus = client.post(f"/v1/memories/{memory_id}/archive", params=scope, json={"bogus_field": 1})
    assert bogus.status_code == 422 and "takes no body" in bogus.json()["detail"]
    garbage = client.post(f"/v1/memories/{memory_id}/archive", params=scope, content=b"garbage",
                          headers={"Content-Type": "application/json"})  # fmt: skip
    assert garbage.status_code == 400 and garbage.json()["code"] == "bad_request"
    assert client.get(f"/v1/memories/{memory_id}", params=scope).json()["status"] == "active"  # nothing changed
    assert client.post(f"/v1/memories/{memory_id}/archive", params=scope, json={}).status_code == 200
    assert client.post(f"/v1/memories/{memory_id}/restore", params=scope).status_code == 200  # no body at all
    # the history names the key that archived and restored, as it does for an edit (it said "api")
    actors = [event["actor"] for event in client.get(f"/v1/memories/{memory_id}/history", params=scope).json()]
    assert actors[-2:] == [actors[0]] * 2 and actors[0].startswith("rest:")


def test_archive_restore_and_forget(client: httpx.Client) -> None:
    scope = {"user_id": "arc"}
    old_address, tea = add(client, "arc", "I live at 12 Elm Street", "I drink oolong tea")
    assert client.post(f"/v1/memories/{old_address}/archive", params=scope).json()["status"] == "archived"
    search = {**scope, "query": "Elm Street address"}
    assert old_address not in [h["memory"]["id"] for h in client.post("/v1/memories/search", json=search).json()]
    with_archive = client.post("/v1/memories/search", json={**search, "include_archived": True}).json()
    assert old_address in [hit["memory"]["id"] for hit in with_archive]
    assert client.post(f"/v1/memories/{old_address}/restore", params=scope).json()["status"] == "active"

    preview = client.post("/v1/forget", json={**scope, "what": "oolong tea"}).json()
    assert preview["deleted"] is False and tea in [item["id"] for item in preview["matched"]]
    assert client.get(f"/v1/memories/{tea}", params=scope).json()["status"] == "active"
    done = client.post("/v1/forget", json={**scope, "what": "oolong tea", "confirm": True}).json()
    assert done["deleted"] is True
    assert client.get(f"/v1/memories/{tea}", params=scope).json()["status"] == "deleted"


def test_sessions_and_consolidation(client: httpx.Client) -> None:
    scope = {"user_id": "ses"}
    turns = [{"role": "user", "content": f"turn {i} about the trip to Kyoto"} for i in range(4)]
    client.post("/v1/memories", json={**scope, "session_id": "trip", "messages": turns}).raise_for_status()
    context = client.get("/v1/sessions/trip/context", params={**scope, "budget_tokens": 20}).json()
    assert 0 < len(context) < 4 and context[-1]["content"] == "turn 3 about the trip to Kyoto"
    jobs = client.post("/v1/sessions/trip/end", params={**scope, "wait": "true"})
    assert jobs.status_code == 200 and isinstance(jobs.json(), list)

    add(client, "dup", "User is allergic to peanuts", "User is allergic to peanuts.")
    merged = client.post("/v1/consolidate", json={"user_id": "dup"}).json()["merged"]
    assert merged == 1


def test_erase_user_needs_confirmation_and_a_wide_enough_key(svc: Service, client: httpx.Client) -> None:
    add(client, "gone", "A secret about gone")
    refused = client.post("/v1/users/gone/erase")
    assert refused.status_code == 409 and refused.json()["code"] == "confirmation_required"
    narrow = svc.auth(svc.token("life", users=["gone"], agents=["bot"]))
    denied = httpx.post(f"{svc.url}/v1/users/gone/erase", params={"confirm": "true"}, headers=narrow)
    assert denied.status_code == 403
    other = svc.auth(svc.token("life", users=["someone-else"]))
    assert httpx.post(f"{svc.url}/v1/users/gone/erase", params={"confirm": "true"}, headers=other).status_code == 403

    report = client.post("/v1/users/gone/erase", params={"confirm": "true"}).json()
    assert sum(report["deleted"].values()) > 0 and not any(report["remaining"].values())
    assert client.get("/v1/memories", params={"user_id": "gone"}).json()["items"] == []


def test_lifecycle_tools_over_mcp(svc: Service) -> None:
    async def session(client: Client) -> dict[str, Any]:
        added = structured(await client.call_tool("add_memory", {"text": "My locker code is 4711"}))
        memory_id = added["results"][0]["id"]
        out = {"archived": structured(await client.call_tool("archive_memory", {"memory_id": memory_id}))}
        out["restored"] = structured(await client.call_tool("restore_memory", {"memory_id": memory_id}))
        out["preview"] = structured(await client.call_tool("forget_memories", {"what": "locker code"}))
        out["forgot"] = structured(await client.call_tool("forget_memories", {"what": "locker code", "confirm": True}))
        out["pending"] = structured(await client.call_tool("review_pending", {}))
        return out

    out = run(session, f"{svc.url}/mcp", headers=svc.auth(svc.token("life", users=["mcp-life"])))
    assert out["archived"]["status"] == "archived" and out["restored"]["status"] == "active"
    assert out["preview"]["deleted"] is False and out["preview"]["matched"][0]["text"] == "My locker code is 4711"
    assert out["forgot"]["deleted"] is True and out["pending"] == []
