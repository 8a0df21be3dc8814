"""The console's own endpoints (/v1/console) and how the console is served, on both backends.

Scoped by the key like the rest of the API: another tenant's ids answer 404, another user's 403.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

from fastapi.testclient import TestClient

from memstrata import Memory
from memstrata.api.keys import KeyStore
from memstrata.config import ServerSettings
from memstrata.service.app import create_app
from memstrata.web import CONTENT_SECURITY_POLICY

SVG_NAMESPACE = "http://www.w3.org/2000/svg"


class Console:
    def __init__(self, client: TestClient, keys: KeyStore) -> None:
        self.client = client
        self.acme = {"Authorization": f"Bearer {keys.create('acme')[1]}"}
        self.alice = {"Authorization": f"Bearer {keys.create('acme', user_ids=['alice'])[1]}"}
        self.other = {"Authorization": f"Bearer {keys.create('other')[1]}"}


@pytest.fixture
def console(memory: Memory, tmp_path: Path) -> Iterator[Console]:
    keys = KeyStore(tmp_path / "keys.db")
    try:
        with TestClient(create_app(memory, ServerSettings(), keys=keys)) as client:
            yield Console(client, keys)
    finally:
        keys.close()


def _turns(*texts: str, day: int = 1) -> list[dict[str, object]]:
    at = datetime(2025, 3, day, 9, 0, tzinfo=UTC)
    return [{"role": "user", "content": text, "timestamp": (at + timedelta(minutes=i)).isoformat()}
            for i, text in enumerate(texts)]  # fmt: skip


def test_provenance_turns_are_the_memorys_own_and_scoped(console: Console) -> None:
    client = console.client
    body = {"user_id": "alice", "session_id": "s1", "messages": _turns("我对花生过敏")}
    added = client.post("/v1/memories", headers=console.acme, json=body).json()
    body = {"user_id": "alice", "session_id": "s2", "messages": _turns("unrelated turn")}
    client.post("/v1/memories", headers=console.acme, json=body)
    episode = added["results"][0]["id"]
    turns = client.get(f"/v1/console/memories/{episode}/turns", headers=console.acme, params={"user_id": "alice"})
    assert turns.status_code == 200
    assert [turn["message"]["content"] for turn in turns.json()] == ["我对花生过敏"]
    assert [turn["message"]["id"] for turn in turns.json()] == added["message_ids"]

    text = client.post("/v1/memories", headers=console.acme, json={"user_id": "alice", "text": "plain text"}).json()
    plain = client.get(f"/v1/console/memories/{text['results'][0]['id']}/turns", headers=console.alice)
    assert plain.status_code == 200 and plain.json() == []  # added as text: no turns behind it

    elsewhere = client.get(f"/v1/console/memories/{episode}/turns", headers=console.other, params={"user_id": "alice"})
    assert elsewhere.status_code == 404 and elsewhere.json()["code"] == "not_found"
    denied = client.get(f"/v1/console/memories/{episode}/turns", headers=console.alice, params={"user_id": "bob"})
    assert denied.status_code == 403 and denied.json()["code"] == "scope_denied"


def test_sessions_group_the_raw_turns_of_a_scope(console: Console) -> None:
    client = console.client
    client.post(
        "/v1/memories",
        headers=console.acme,
        json={"user_id": "alice", "session_id": "march", "messages": _turns("第一句", "second", day=1)},
    )
    client.post(
        "/v1/memories",
        headers=console.acme,
        json={"user_id": "alice", "session_id": "april", "messages": _turns("later", day=20)},
    )
    client.post(
        "/v1/memories",
        headers=console.acme,
        json={"user_id": "bob", "session_id": "bobs", "messages": _turns("bob's turn")},
    )
    client.post("/v1/memories", headers=console.other,
                json={"user_id": "alice", "session_id": "theirs", "messages": _turns("another tenant")})  # fmt: skip

    found = client.get("/v1/console/sessions", headers=console.alice).json()  # the key fills in user alice
    assert [(s["session_id"], s["turns"], s["preview"]) for s in found["sessions"]] == [
        ("april", 1, "later"),
        ("march", 2, "第一句"),
    ]
    assert found["turns_scanned"] == 3 and found["truncated"] is False
    assert found["sessions"][1]["first_at"] < found["sessions"][1]["last_at"]
    assert client.get("/v1/console/sessions", headers=console.acme).status_code == 422  # no scope: says to name one
    theirs = client.get("/v1/console/sessions", headers=console.other, params={"user_id": "alice"}).json()
    assert [s["session_id"] for s in theirs["sessions"]] == ["theirs"]


def test_the_list_takes_every_console_filter(console: Console) -> None:
    client = console.client
    post = lambda body: client.post("/v1/memories", headers=console.alice, json=body).json()  # noqa: E731
    db = post({"text": "The database is PostgreSQL", "key": "project:db:engine"})["results"][0]["id"]
    post({"text": "The cache is Redis", "key": "project:cache:engine"})
    post({"text": "我喜欢乌龙茶", "kind": "preference"})

    def texts(**params: object) -> list[str]:
        response = client.get("/v1/console/memories", headers=console.alice, params=params)
        assert response.status_code == 200, response.text
        return sorted(item["text"] for item in response.json()["items"])

    assert texts(key_prefix="project:db") == ["The database is PostgreSQL"]
    assert texts(kind="preference") == ["我喜欢乌龙茶"]
    assert len(texts()) == 3
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert texts(created_from=tomorrow) == [] and len(texts(created_to=tomorrow)) == 3
    page = client.get("/v1/console/memories", headers=console.alice, params={"limit": 2}).json()
    assert len(page["items"]) == 2 and page["next_offset"] == 2

    held = datetime.now(UTC)
    time.sleep(0.01)
    client.delete(f"/v1/memories/{db}", headers=console.alice)
    assert "The database is PostgreSQL" not in texts()
    assert "The database is PostgreSQL" in texts(known_at=held.isoformat())  # the store held it then
    assert "The database is PostgreSQL" in texts(status="deleted")
    bad = client.get(
        "/v1/console/memories", headers=console.alice, params={"created_from": tomorrow, "created_to": held.isoformat()}
    )
    assert bad.status_code == 422  # an empty range says so instead of answering nothing
    assert client.get("/v1/console/memories", headers=console.other, params={"user_id": "alice"}).json()["items"] == []


def test_the_console_is_served_with_a_strict_policy_and_stays_out_of_the_api_schema(console: Console) -> None:
    client = console.client
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY and "connect-src 'self'" in CONTENT_SECURITY_POLICY
    assert '<script type="module" src="/console/js/app.js">' in page.text
    assert "http://" not in page.text and "https://" not in page.text  # nothing loaded from elsewhere
    script = client.get("/console/js/app.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert script.headers["x-content-type-options"] == "nosniff"
    assert client.get("/console/js/nothere.js").status_code == 404
    assert client.get("/v1/whoami").headers.get("content-security-policy") is None  # the API is left as it was
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/console/memories", "/v1/console/memories/{memory_id}/turns", "/v1/console/sessions"} <= set(paths)
    assert "/" not in paths and not any(path.startswith("/console") for path in paths)


def test_the_assets_reach_nothing_outside_the_server() -> None:
    """No CDN, font service or analytics: every URL in the shipped files is relative to the server."""
    from memstrata.web import STATIC_DIR

    files = [path for path in STATIC_DIR.rglob("*") if path.is_file()]
    assert {path.suffix for path in files} <= {".html", ".css", ".js", ".svg"}
    for path in files:
        text = path.read_text(encoding="utf-8").replace(SVG_NAMESPACE, "")  # a name, never fetched
        assert not [word for word in ("http://", "https://", "//cdn", "@import") if word in text], path
