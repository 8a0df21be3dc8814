"""API keys and tenant isolation: a key reaches its tenant's memories in its allowed scopes, nothing else."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service_support import Service, service

from memstrata.api.keys import KeyStore
from memstrata.config import ServerSettings
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.service.app import create_app
from memstrata.types import MemoryItem, Scope

TENANTS = ["acme", "globex"]
USERS = ["ann", "bob", "cy"]
AGENTS = ["planner", "coder", None]


def test_keys_are_stored_hashed_and_revocable(tmp_path: Path) -> None:
    keys = KeyStore(tmp_path / "keys.db")
    key, token = keys.create("acme", user_ids=[" ann ", "bob", "ann"], name="ci")
    assert key.user_ids == ("ann", "bob") and key.agent_ids is None
    secret = token.split("_", 2)[2]
    raw = (tmp_path / "keys.db").read_bytes()
    assert secret.encode() not in raw
    stored = sqlite3.connect(tmp_path / "keys.db").execute("SELECT secret_sha256 FROM api_keys").fetchone()[0]
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    assert (tmp_path / "keys.db").stat().st_mode & 0o077 == 0

    verified = keys.verify(token)
    assert verified is not None and verified.principal().tenant_id == "acme"
    for bad in ["", "msk", "msk__", f"msk_{key.id}_wrong", token + "x", token.replace("msk", "xyz", 1), "Bearer x"]:
        assert keys.verify(bad) is None
    assert [k.id for k in keys.list_keys()] == [key.id]
    keys.revoke(key.id)
    assert keys.verify(token) is None and keys.list_keys() == []
    assert keys.list_keys(include_revoked=True)[0].revoked_at is not None
    with pytest.raises(NotFoundError):
        keys.revoke(key.id)
    with pytest.raises(InvalidInputError):
        keys.create("acme", user_ids=[])
    with pytest.raises(InvalidInputError, match="needs a tenant"):
        keys.create(" ")
    keys.close()


def test_bad_and_revoked_keys_get_401(svc: Service) -> None:
    key, token = svc.keys.create("acme")
    for headers in ({}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer"}, {"Authorization": "Bearer nope"}):
        response = httpx.get(f"{svc.url}/v1/whoami", headers=headers)
        assert response.status_code == 401 and response.json()["code"] == "unauthenticated"
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(f"{svc.url}/v1/whoami", headers=svc.auth(token)).status_code == 200
    svc.keys.revoke(key.id)  # as `memstrata keys revoke` does, from outside the server process
    assert httpx.get(f"{svc.url}/v1/whoami", headers=svc.auth(token)).status_code == 401


def test_single_user_key_fills_in_its_user(svc: Service) -> None:
    token = svc.token("acme", users=["solo"])
    with httpx.Client(base_url=svc.url, headers=svc.auth(token)) as http:
        added = http.post("/v1/memories", json={"text": "solo likes jazz"}).json()
        assert svc.memory.for_tenant("acme").get(added["results"][0]["id"], user_id="solo").text == "solo likes jazz"
        assert (
            http.post("/v1/memories/search", json={"query": "jazz"}).json()[0]["memory"]["scope"]["user_id"] == "solo"
        )
        denied = http.post("/v1/memories/search", json={"query": "jazz", "user_id": "other"})
        assert denied.status_code == 403 and denied.json()["code"] == "scope_denied"
        # the store reads "solo " as solo, so the key allows it (it answered 403 while the store trimmed it)
        assert http.post("/v1/memories/search", json={"query": "jazz", "user_id": " solo "}).status_code == 200


def test_anonymous_access_only_on_loopback_when_enabled(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    with service(tmp_path / "anon", embedder, allow_anonymous_loopback=True) as anon:
        added = httpx.post(f"{anon.url}/v1/memories", json={"user_id": "me", "text": "local note"})
        assert added.status_code == 201
        assert anon.memory.get(added.json()["results"][0]["id"], user_id="me").scope.tenant_id is None
    with pytest.raises(InvalidInputError, match="loopback"):
        create_app(anon.memory, ServerSettings(host="0.0.0.0", allow_anonymous_loopback=True), keys=anon.keys)
    with pytest.raises(InvalidInputError, match="KeyStore"):
        create_app(anon.memory, ServerSettings())


# --- the property: no request reaches outside its key's tenant and scopes -------------------------------


@dataclass(frozen=True)
class World:
    svc: Service
    items: dict[str, MemoryItem]  # every seeded memory by id


@pytest.fixture(scope="module")
def world(svc: Service) -> World:
    """Two tenants × three users × (two agents and none), two memories each; every text mentions tea."""
    items: dict[str, MemoryItem] = {}
    for tenant in TENANTS:
        view = svc.memory.for_tenant(tenant)
        for user in USERS:
            for agent in AGENTS:
                texts = [f"{tenant} {user} {agent} likes green tea", f"{user} drinks tea with {agent}"]
                for event in view.add(texts, user_id=user, agent_id=agent).results:
                    items[event.id] = view.get(event.id, user_id=user)
    return World(svc, items)


def reachable(key: dict[str, Any], scope: Scope) -> bool:
    return (
        scope.tenant_id == key["tenant"]
        and (key["users"] is None or scope.user_id in key["users"])
        and (key["agents"] is None or scope.agent_id in key["agents"])
    )


keys_strategy = st.fixed_dictionaries(
    {
        "tenant": st.sampled_from(TENANTS),
        "users": st.none() | st.lists(st.sampled_from(USERS), min_size=1, max_size=2, unique=True),
        "agents": st.none() | st.lists(st.sampled_from(["planner", "coder"]), min_size=1, max_size=2, unique=True),
    }
)
requests_strategy = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["get", "history", "update", "delete", "purge", "search", "list", "context", "deep"]),
        "target": st.integers(min_value=0, max_value=10_000),  # an index into the seeded ids, or a guessed id
        "user_id": st.none() | st.sampled_from(USERS),
        "agent_id": st.none() | st.sampled_from(["planner", "coder"]),
    }
)


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=keys_strategy, calls=st.lists(requests_strategy, min_size=1, max_size=4))
def test_no_access_outside_the_keys_tenant_and_scopes(
    world: World, http: httpx.Client, key: dict[str, Any], calls: list[dict[str, Any]]
) -> None:
    svc = world.svc
    headers = svc.auth(svc.token(key["tenant"], users=key["users"], agents=key["agents"]))
    ids = sorted(world.items)
    for call in calls:
        target = ids[call["target"] % len(ids)] if call["target"] < 5_000 else f"guess{call['target']:x}"
        params = {name: call[name] for name in ("user_id", "agent_id") if call[name] is not None}
        original = world.items.get(target)
        aimed = call["op"] not in ("search", "list", "context", "deep")  # the other operations name the target id
        outside = aimed and original is not None and not reachable(key, original.scope)
        if call["op"] == "purge" and original is not None and not outside:
            continue  # purging what the key may reach is allowed; it would only shrink the world
        before = current(world, target)
        response = send(http, svc.url, headers, call["op"], target, params)
        assert response.status_code < 500, response.text

        if response.status_code < 300 and call["op"] in ("search", "list", "deep"):
            body = response.json()
            hits = body["hits"] if call["op"] == "deep" else body
            found = body["items"] if call["op"] == "list" else [hit["memory"] for hit in hits]
            for memory in found:
                assert reachable(key, Scope.model_validate(memory["scope"])), (key, memory)
        if response.status_code < 300 and call["op"] == "context":
            # context() reads a user's memories from every agent: never past the key's agents (a user trial)
            for cited in response.json()["citations"]:
                assert cited not in world.items or reachable(key, world.items[cited].scope), (key, call, cited)
        if outside:
            assert response.status_code in (403, 404, 422), (key, call, response.text)  # refused, never served
            assert current(world, target) == before, "a request changed a memory outside its key's reach"
        if call["op"] == "get":
            expected = expected_get_status(key, params, original if before is not None else None)
            assert response.status_code == expected, (key, call, response.text)


def current(world: World, memory_id: str) -> tuple[str, str, object] | None:
    """What the store holds for a seeded id right now, read past the API (None: unknown or purged)."""
    original = world.items.get(memory_id)
    if original is None:
        return None
    view = world.svc.memory.for_tenant(original.scope.tenant_id)
    try:
        item = view.get(memory_id, user_id=original.scope.user_id)
    except NotFoundError:
        return None
    return item.text, item.status.value, item.updated_at


def expected_get_status(key: dict[str, Any], params: dict[str, str], stored: MemoryItem | None) -> int:
    """The exact answer to GET /v1/memories/{id}: an oracle written from the rules, not from the code."""
    scope: dict[str, str | None] = {}
    for field, allowed in (("user_id", key["users"]), ("agent_id", key["agents"])):
        value = params.get(field) or (allowed[0] if allowed is not None and len(allowed) == 1 else None)
        if allowed is not None and value not in allowed:
            return 403
        scope[field] = value
    if scope["user_id"] is None and scope["agent_id"] is None:
        return 422
    if stored is None or stored.scope.tenant_id != key["tenant"]:
        return 404
    matches = all(scope[f] is None or scope[f] == getattr(stored.scope, f) for f in ("user_id", "agent_id"))
    return 200 if matches else 404


def send(
    http: httpx.Client, url: str, headers: dict[str, str], op: str, target: str, params: dict[str, str]
) -> httpx.Response:
    item = f"{url}/v1/memories/{target}"
    if op == "get":
        return http.get(item, params=params, headers=headers)
    if op == "history":
        return http.get(f"{item}/history", params=params, headers=headers)
    if op == "update":
        return http.patch(item, params=params, headers=headers, json={"metadata": {"touched": True}})
    if op == "delete":
        return http.delete(item, params=params, headers=headers)
    if op == "purge":  # only ever aimed at ids the key must not reach: a successful purge would fail the test
        return http.post(f"{item}/purge", params=params, headers=headers)
    if op == "search":
        return http.post(f"{url}/v1/memories/search", headers=headers, json={**params, "query": "tea", "limit": 50})
    if op == "context":
        return http.post(f"{url}/v1/context", headers=headers, json={**params, "query": "who likes tea?", "limit": 50})
    if op == "deep":
        return http.post(
            f"{url}/v1/memories/search/deep", headers=headers, json={**params, "query": "tea", "limit": 50}
        )
    return http.get(f"{url}/v1/memories", params={**params, "limit": 100}, headers=headers)
