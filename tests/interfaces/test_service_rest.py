"""The REST API over real HTTP: every endpoint, the problem+json error shape, size limits."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from service_support import Service, running, service

from memstrata.config import ServerSettings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.service.app import create_app

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def client(svc: Service) -> Iterator[httpx.Client]:
    token = svc.token("acme")
    with httpx.Client(base_url=svc.url, headers=svc.auth(token), timeout=30) as http:
        yield http


def assert_problem(response: httpx.Response, status: int, code: str, *, mentions: str = "") -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["code"] == code and body["type"] == "about:blank"
    assert body["title"] and body["detail"]
    assert mentions in body["detail"]
    return body


def _keys(node: object, path: str = "") -> list[tuple[str, str]]:
    """(path, key) of every object key in a JSON document."""
    if isinstance(node, dict):
        return [(path, key) for key in node] + [pair for key, v in node.items() for pair in _keys(v, f"{path}/{key}")]
    if isinstance(node, list):
        return [pair for index, v in enumerate(node) for pair in _keys(v, f"{path}/{index}")]
    return []


def test_health_ready_and_docs_need_no_key(svc: Service) -> None:
    assert httpx.get(f"{svc.url}/health").json() == {"status": "ok"}
    ready = httpx.get(f"{svc.url}/ready").json()
    assert ready["status"] == "ready" and ready["embedder"] == "use-multilingual-v3:512"
    assert "swagger" in httpx.get(f"{svc.url}/docs").text.lower()
    spec = httpx.get(f"{svc.url}/openapi.json").json()
    assert {"/v1/memories", "/v1/memories/search", "/v1/memories/{memory_id}/history", "/v1/jobs"} <= set(spec["paths"])
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    # bounds are JSON Schema's minimum / maximum: pydantic wrote an optional number's as unknown "ge" / "le" keys
    unknown = [path for path, key in _keys(spec) if key in ("ge", "le", "gt", "lt") and not path.endswith("properties")]
    assert unknown == [] and spec["components"]["schemas"]["SearchRequest"]["properties"]["threshold"]["anyOf"][0][
        "maximum"] == 1.0  # fmt: skip
    for path in ("/", "/health", "/ready"):  # monitors probe with HEAD: 200 and no body, not 405
        head = httpx.head(f"{svc.url}{path}")
        assert (head.status_code, head.content) == (200, b""), path


def test_memory_lifecycle_over_http(client: httpx.Client) -> None:
    scope = {"user_id": "u-life"}
    added = client.post("/v1/memories", json={**scope, "text": ["我喜欢喝乌龙茶", "I play tennis on Sundays"]})
    assert added.status_code == 201
    tea_id, tennis_id = (event["id"] for event in added.json()["results"])

    hits = client.post("/v1/memories/search", json={**scope, "query": "What tea do I like?", "limit": 2}).json()
    assert hits[0]["memory"]["id"] == tea_id and hits[0]["breakdown"]["vector_rank"] == 1
    filtered = client.post("/v1/memories/search", json={**scope, "query": "tea", "filters": {"kind": "preference"}})
    assert filtered.json() == []

    item = client.get(f"/v1/memories/{tea_id}", params=scope).json()
    assert item["text"] == "我喜欢喝乌龙茶" and item["scope"]["tenant_id"] == "acme"

    updated = client.patch(
        f"/v1/memories/{tea_id}", params=scope, json={"text": "我现在更喜欢红茶", "reason": "taste changed"}
    )
    assert updated.status_code == 200 and updated.json()["text"] == "我现在更喜欢红茶"
    deleted = client.delete(f"/v1/memories/{tea_id}", params={**scope, "reason": "asked to forget"})
    assert deleted.json()["status"] == "deleted"
    history = client.get(f"/v1/memories/{tea_id}/history", params=scope).json()
    assert [event["action"] for event in history] == ["ADD", "UPDATE", "DELETE"]

    assert client.post(f"/v1/memories/{tennis_id}/purge", params=scope).status_code == 204
    assert_problem(client.get(f"/v1/memories/{tennis_id}", params=scope), 404, "not_found", mentions=tennis_id)


def test_list_pages_through_every_memory(client: httpx.Client) -> None:
    scope = {"user_id": "u-pages"}
    texts = [f"fact number {i}" for i in range(7)]
    client.post("/v1/memories", json={**scope, "text": texts, "kind": "knowledge"}).raise_for_status()
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = client.get("/v1/memories", params={**scope, "limit": 3, "offset": offset, "kind": "knowledge"}).json()
        seen += [item["text"] for item in page["items"]]
        offset = page["next_offset"]
    assert sorted(seen) == sorted(texts)
    oldest_first = client.get("/v1/memories", params={**scope, "descending": "false", "limit": 1}).json()
    assert oldest_first["items"][0]["text"] in texts

    assert client.request("DELETE", "/v1/memories", params=scope).json() == {"deleted": 7}
    assert client.get("/v1/memories", params=scope).json()["items"] == []
    gone = client.get("/v1/memories", params={**scope, "status": "deleted"}).json()["items"]
    assert len(gone) == 7


def test_messages_jobs_stats_and_whoami(client: httpx.Client) -> None:
    scope = {"user_id": "u-turns", "session_id": "s1"}
    turns = [
        {"role": "user", "content": "I'm allergic to peanuts, remember that."},
        {"role": "assistant", "content": "Noted."},
    ]
    added = client.post("/v1/memories", json={**scope, "messages": turns, "infer": True, "wait": True}).json()
    assert added["job_id"] and len(added["message_ids"]) == 2
    stored = client.get("/v1/messages", params=scope).json()
    assert [m["message"]["content"] for m in stored] == [t["content"] for t in turns]

    jobs = client.get("/v1/jobs", params={**scope, "status": "done"}).json()
    assert [job["id"] for job in jobs] == [added["job_id"]]
    assert client.post("/v1/jobs/flush", params=scope).json()[0]["status"] == "done"
    assert_problem(client.post("/v1/jobs/nope/retry", params=scope), 404, "not_found", mentions="no failed job")

    stats = client.get("/v1/stats", params=scope).json()
    assert stats["messages"] == 2 and "location" not in stats
    assert client.get("/v1/whoami").json()["tenant_id"] == "acme"


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status", "code", "mentions"),
    [
        ("POST", "/v1/memories", {"json": {"text": "no scope"}}, 422, "invalid_input", "at least one of user_id"),
        ("POST", "/v1/memories", {"json": {"user_id": "u"}}, 422, "invalid_request", "either text or messages"),
        (
            "POST",
            "/v1/memories",
            {"json": {"user_id": "u", "text": "x", "colour": 1}},
            422,
            "invalid_request",
            "colour",
        ),
        ("POST", "/v1/memories", {"json": {"user_id": "u", "text": "a\x00b"}}, 422, "invalid_input", "NUL"),
        (  # a turn as a bare string: the answer says how a turn is written
            "POST",
            "/v1/memories",
            {"json": {"user_id": "u", "messages": ["我喜欢喝茶"]}},
            422,
            "invalid_request",
            '{"role": "user", "content": "..."}',
        ),
        (
            "POST",
            "/v1/memories",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            400,  # docs/server.md: a body that is not JSON at all
            "bad_request",
            "JSON",
        ),
        (
            "POST",
            "/v1/memories/search",
            {"json": {"user_id": "u", "query": "q", "limit": 0}},
            422,
            "invalid_request",
            "limit",
        ),
        ("GET", "/v1/memories", {"params": {"user_id": "u", "order_by": "colour"}}, 422, "invalid_request", ""),
        (  # a number is not a date-time (pydantic alone would read "0" as 1970-01-01)
            "POST",
            "/v1/memories/search",
            {"json": {"user_id": "u", "query": "tea", "filters": {"valid_at": "0"}}},
            422,
            "invalid_request",
            "ISO 8601",
        ),
        (
            "GET",
            "/v1/console/memories",
            {"params": {"user_id": "u", "as_of": "1700000000"}},
            422,
            "invalid_request",
            "ISO 8601",
        ),
        ("PATCH", "/v1/memories/x", {"params": {"user_id": "u"}, "json": {}}, 422, "invalid_request", "new text"),
        ("GET", "/v1/memories/x/history", {"params": {"user_id": "u"}}, 404, "not_found", "no memory x in scope"),
        ("GET", "/v1/jobs", {"params": {"user_id": "u", "status": "sleepy"}}, 422, "invalid_request", "status"),
        ("GET", "/v1/memories", {"params": {"user_id": "u", "limt": "5"}}, 422, "invalid_request", "limt"),
        ("POST", "/v1/jobs/flush", {"params": {"user_id": "u", "": "null"}}, 422, "invalid_request", "unknown"),
        ("GET", "/v2/nothing", {}, 404, "no_route", "/docs"),
        ("PUT", "/v1/memories", {}, 405, "method_not_allowed", "method"),
    ],
)
def test_errors_are_problem_details(
    client: httpx.Client, method: str, path: str, kwargs: dict[str, Any], status: int, code: str, mentions: str
) -> None:
    body = assert_problem(client.request(method, path, **kwargs), status, code, mentions=mentions)
    if code == "invalid_request":
        assert body["errors"] and all("loc" in error for error in body["errors"])


def test_request_size_limit(client: httpx.Client) -> None:
    big = {"user_id": "u-big", "text": "x" * 70_000}
    assert_problem(client.post("/v1/memories", json=big), 413, "too_large", mentions="max_request_bytes")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold while streaming too
        yield b'{"user_id": "u-big", "text": "'
        for _ in range(20):
            yield b"y" * 8192
        yield b'"}'

    streamed = client.post("/v1/memories", content=chunks(), headers={"content-type": "application/json"})
    assert_problem(streamed, 413, "too_large")
    under = client.post("/v1/memories", json={"user_id": "u-big", "text": "z" * 10_000})
    assert under.status_code == 201
    assert client.get("/v1/memories", params={"user_id": "u-big"}).json()["items"][0]["text"] == "z" * 10_000


@pytest.mark.parametrize("parser", ["auto", "h11"])  # httptools when installed; h11 is uvicorn's fallback
def test_long_query_strings_reach_validation(svc: Service, parser: str) -> None:
    """The longest valid query string (4,000 four-byte characters: 48 KB percent-encoded, over h11's 16 KiB default
    head) is answered by the app, and a value over the parameter's limit gets a 422 problem document."""
    query = urlencode({"user_id": "u-long", "context": "𝄞" * 4_000})
    assert len(query) > 48_000
    headers = svc.auth(svc.token("long-query"))
    with running(create_app(svc.memory, ServerSettings(), keys=svc.keys), http=parser) as url:
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        try:
            connection.request("GET", f"/v1/tasks/strategies?{query}", headers=headers)
            response = connection.getresponse()
            assert (response.status, json.loads(response.read())) == (200, [])
        finally:
            connection.close()
        too_long = httpx.get(f"{url}/v1/tasks/strategies", params={"user_id": "u", "context": "调" * 4_001},
                             headers=headers, timeout=30)  # fmt: skip
        assert_problem(too_long, 422, "invalid_request", mentions="context")


def test_a_body_that_is_not_json_is_a_bad_request_and_405_lists_the_methods(client: httpx.Client) -> None:
    """Broken JSON answered 422 (the documented status is 400), and a 405's Allow header was empty."""
    for broken in (b'{"user_id": "lin", "text": ', b"not json"):
        sent = client.post("/v1/memories", content=broken, headers={"content-type": "application/json"})
        assert_problem(sent, 400, "bad_request", mentions="not valid JSON")
    body = b'{"user_id": "lin", "text": "hello"}'  # JSON sent as text or a form: 422 "should be a valid dictionary"
    for declared in ("text/plain", "application/x-www-form-urlencoded"):
        sent = client.post("/v1/memories", content=body, headers={"content-type": declared})
        assert_problem(sent, 415, "unsupported_media_type", mentions="Content-Type: application/json")
    # no Content-Type at all (curl --data-binary -H 'Content-Type:'): 422 "should be a valid dictionary" (a user trial)
    unlabelled = client.post("/v1/memories", content=body)  # httpx sends raw bytes with no Content-Type
    assert "content-type" not in unlabelled.request.headers
    assert_problem(unlabelled, 415, "unsupported_media_type", mentions="without a Content-Type")
    missing = client.post("/v1/memories", json={"user_id": "lin"})  # JSON of the wrong shape stays 422
    assert_problem(missing, 422, "invalid_request")
    refused = client.put("/v1/memories", json={})
    assert_problem(refused, 405, "method_not_allowed")
    assert {"GET", "POST", "DELETE"} <= set(refused.headers["allow"].split(", "))
    assert "PATCH" in client.put("/v1/memories/abc", json={}).headers["allow"]


def test_skip_leaves_out_items_the_schema_refuses_and_keeps_the_rest(client: httpx.Client) -> None:
    """With on_error="skip", an item with a bad kind or role refused the whole request (422) instead of being
    left out and reported by its position like the items add() itself refuses."""
    texts = ["Lin drinks oolong", {"text": "bad kind", "kind": "No Caps"}, " ", "林晓住在杭州"]
    sent = client.post("/v1/memories", json={"user_id": "skipper", "text": texts, "on_error": "skip"})
    assert sent.status_code == 201, sent.text
    body = sent.json()
    assert [event["index"] for event in body["results"]] == [0, 3]
    assert [error["index"] for error in body["errors"]] == [1, 2]
    assert "kind" in body["errors"][0]["error"] and body["errors"][1]["error"].startswith("item 2 ")  # not "item 1"
    turns = [{"role": "user", "content": "hello"}, {"role": "robot", "content": "x"}, {"role": "user", "content": "ok"}]
    sent = client.post("/v1/memories", json={"user_id": "skipper", "messages": turns, "on_error": "skip"})
    assert sent.status_code == 201, sent.text
    assert [error["index"] for error in sent.json()["errors"]] == [1]
    assert len(sent.json()["message_ids"]) == 2
    refused = client.post("/v1/memories", json={"user_id": "skipper", "messages": turns})  # "raise": all or nothing
    assert_problem(refused, 422, "invalid_request", mentions="role")
    nothing = client.post("/v1/memories", json={"user_id": "skipper", "text": [{"text": "x", "kind": "No"}],
                                                "on_error": "skip"})  # fmt: skip
    assert_problem(nothing, 422, "invalid_request", mentions="none of the 1 items")
    mixed = client.post("/v1/memories", json={"user_id": "skipper", "text": [{"text": "x", "kind": "No"}, " ", "\t"],
                                              "on_error": "skip"})  # fmt: skip
    detail = assert_problem(mixed, 422, "invalid_input", mentions="none of the items is valid")["detail"]
    assert "item 1 is empty" in detail and "item 0: kind" in detail  # each fault named by its request position


def test_other_methods_on_action_paths_are_405_not_a_missing_memory(client: httpx.Client) -> None:
    """GET /v1/memories/used answered 404 'memory not found': the path was read as a memory id."""
    for path in ("/v1/memories/used", "/v1/memories/search"):
        for method in ("GET", "PATCH", "DELETE"):
            refused = client.request(method, path, params={"user_id": "lin"})
            assert_problem(refused, 405, "method_not_allowed")
            assert refused.headers["allow"] == "POST"
    assert_problem(client.get("/v1/memories/usedx", params={"user_id": "lin"}), 404, "not_found")


def test_an_unexpected_error_leaves_the_connection_open(svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a 500 uvicorn closed the keep-alive connection, so the client's next request on it failed too."""
    from memstrata import Memory

    original = Memory.get_all
    calls = {"n": 0}

    def fails_once(self: Memory, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a bug")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Memory, "get_all", fails_once)
    parts = urlsplit(svc.url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = svc.auth(svc.token("unexpected"))
    try:
        bodies = []
        for status in (500, 200):
            connection.request("GET", "/v1/memories?user_id=u-500", headers=headers)
            response = connection.getresponse()
            bodies.append(json.loads(response.read()))
            assert response.status == status, bodies
        assert bodies[0]["code"] == "internal" and bodies[1]["items"] == []
    finally:
        connection.close()


def test_ids_with_a_slash_can_be_read_ended_and_erased(client: httpx.Client) -> None:
    """Such an id was stored, then /v1/sessions/a%2Fb/... answered 404 no_route (the console could not end it)."""
    turns = [{"role": "user", "content": "明天下午三点开会"}, {"role": "assistant", "content": "OK, 3 pm tomorrow."}]
    added = client.post("/v1/memories", json={"user_id": "amy", "session_id": "a/b", "messages": turns})
    assert added.status_code == 201, added.text
    read = client.get("/v1/sessions/a%2Fb/context", params={"user_id": "amy"})
    assert read.status_code == 200 and [t["content"] for t in read.json()] == [t["content"] for t in turns]
    ended = client.post("/v1/sessions/a%2Fb/end", params={"user_id": "amy"})
    assert ended.status_code == 200, ended.text
    # and a user id with a slash can be erased: it answered 404 no_route
    assert client.post("/v1/memories", json={"user_id": "team/amy", "text": "我喜欢喝乌龙茶"}).status_code == 201
    erased = client.post("/v1/users/team%2Famy/erase", params={"confirm": "true"})
    assert erased.status_code == 200 and erased.json()["deleted"]["memories"] == 1, erased.text
    assert client.get("/v1/memories", params={"user_id": "team/amy"}).json()["items"] == []


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def test_metadata_nested_too_deep_is_refused_and_the_scope_stays_readable(client: httpx.Client) -> None:
    """Metadata 300 levels deep was stored (201), then every list and search of the scope answered 500: pydantic
    stops serialising a few hundred levels down. It is refused at the edge now, on add and on PATCH."""
    deep = client.post("/v1/memories", json={"user_id": "d", "text": "deep", "metadata": _nested(300)})
    assert_problem(deep, 422, "invalid_input", mentions="nests deeper than 32 levels")
    kept = client.post("/v1/memories", json={"user_id": "d", "text": "shallow enough", "metadata": _nested(32)})
    assert kept.status_code == 201, kept.text
    memory_id = kept.json()["results"][0]["id"]
    patched = client.patch(f"/v1/memories/{memory_id}", params={"user_id": "d"}, json={"metadata": _nested(33)})
    assert_problem(patched, 422, "invalid_input", mentions="flatten it")
    listed = client.get("/v1/memories", params={"user_id": "d"})
    assert listed.status_code == 200 and [item["text"] for item in listed.json()["items"]] == ["shallow enough"]


def test_json_nested_past_the_parser_says_so(client: httpx.Client) -> None:
    """5,000 levels of valid JSON stop Python's parser, which answered "the body could not be read as JSON"."""
    body = '{"user_id": "d5000", "text": "t", "metadata": ' + '{"n": ' * 5000 + "1" + "}" * 5000 + "}"
    resp = client.post("/v1/memories", content=body.encode(), headers={"content-type": "application/json"})
    assert_problem(resp, 400, "bad_request", mentions="at most 32 levels")
    assert client.get("/v1/memories", params={"user_id": "d5000"}).json()["items"] == []


def test_a_key_sent_twice_in_one_object_is_refused(client: httpx.Client) -> None:
    """{"text": "a", "text": "b"} stored "b" without a word; a proxy or log reader may take "a"."""
    twice = '{"user_id": "dup", "text": "I like tea", "text": "我喜欢咖啡"}'.encode()
    resp = client.post("/v1/memories", content=twice, headers={"content-type": "application/json"})
    assert_problem(resp, 422, "invalid_request", mentions="'text' appears twice")
    nested = b'{"user_id": "dup", "text": "t", "metadata": {"a": 1, "a": 2}}'
    resp = client.post("/v1/memories", content=nested, headers={"content-type": "application/json"})
    assert_problem(resp, 422, "invalid_request", mentions="'a' appears twice")
    assert client.get("/v1/memories", params={"user_id": "dup"}).json()["items"] == []
    search = b'{"user_id": "dup", "query": "tea", "query": "coffee"}'
    resp = client.post("/v1/memories/search", content=search, headers={"content-type": "application/json"})
    assert_problem(resp, 422, "invalid_request", mentions="'query' appears twice")


def test_a_query_parameter_given_twice_is_refused_unless_it_takes_a_list(client: httpx.Client) -> None:
    """?user_id=lin&user_id=mallory read mallory's memories: the last value won without a word."""
    client.post("/v1/memories", json={"user_id": "mallory", "text": "mallory's note"})
    twice = client.get("/v1/memories", params=[("user_id", "lin"), ("user_id", "mallory")])
    assert_problem(twice, 422, "invalid_request", mentions="'user_id' is given 2 times")
    listed = client.get("/v1/jobs", params=[("user_id", "mallory"), ("status", "done"), ("status", "failed")])
    assert listed.status_code == 200, listed.text  # status takes a list


def test_a_confidence_that_is_not_a_number_is_named_so(client: httpx.Client) -> None:
    """NaN was refused as "Input should be less than or equal to 1"."""
    body = b'{"user_id": "n", "text": "c", "confidence": NaN}'
    resp = client.post("/v1/memories", content=body, headers={"content-type": "application/json"})
    assert_problem(resp, 422, "invalid_request", mentions="finite number")


def test_a_memory_is_read_by_the_short_id_context_shows(client: httpx.Client) -> None:
    """context() cites memories as [845fe6ee]; GET /v1/memories/845fe6ee answered 404 "no memory 845fe6ee"."""
    added = client.post("/v1/memories", json={"user_id": "p", "text": "我的猫叫团子"}).json()["results"][0]["id"]
    shown = client.get(f"/v1/memories/{added[:8]}", params={"user_id": "p"})
    assert shown.status_code == 200 and shown.json()["id"] == added
    history = client.get(f"/v1/memories/{added[:8]}/history", params={"user_id": "p"})
    assert history.status_code == 200 and history.json()[0]["memory_id"] == added
    assert client.get(f"/v1/memories/{added[:8]}", params={"user_id": "someone-else"}).status_code == 404
    assert client.get(f"/v1/memories/{added[:6]}", params={"user_id": "p"}).json()["id"] == added


def test_a_fast_search_runs_on_the_event_loop_and_a_deep_one_in_a_worker_thread(
    client: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fast search is milliseconds of Python: the hop to a worker thread and back cost more than it bought
    (bench/results/2026-12-06-service-inline-*.md). A deep one waits on a model for seconds, so it must not
    hold the event loop that every other request of the process needs."""
    import asyncio

    from memstrata import Memory

    original = Memory.search
    on_the_loop: list[bool] = []

    def search(self: Memory, *args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
            on_the_loop.append(True)
        except RuntimeError:  # a worker thread runs no event loop
            on_the_loop.append(False)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Memory, "search", search)
    assert client.post("/v1/memories", json={"user_id": "u-loop", "text": "我周末喜欢打羽毛球"}).status_code == 201
    for mode in ("fast", "deep"):
        found = client.post("/v1/memories/search", json={"user_id": "u-loop", "query": "周末做什么运动", "mode": mode})
        assert found.status_code == 200 and found.json()[0]["memory"]["text"] == "我周末喜欢打羽毛球", found.text
    assert on_the_loop[0] is True and on_the_loop[1] is False


class _HeldEmbedder:
    """The real embedder, held on texts longer than 1,000 characters until released."""

    def __init__(self, embedder: Any) -> None:
        self.inner, self.model_id, self.dims = embedder, embedder.model_id, embedder.dims
        self.release, self.entered = threading.Event(), threading.Event()

    def embed_batch(self, texts: Any) -> Any:
        if any(len(text) > 1_000 for text in texts):
            self.entered.set()
            self.release.wait(30)
        return self.inner.embed_batch(texts)


def test_a_long_query_is_searched_off_the_event_loop(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    """A user trial: eight searches of ~19,000-character queries each embedded for a second on the event loop, and
    every other request, /health included, waited up to 8.7 s. Held mid-embedding here, one must not stop /health."""
    held = _HeldEmbedder(embedder)
    with service(tmp_path / "held", held) as svc:  # type: ignore[arg-type]
        headers = svc.auth(svc.token("acme", users=["u"]))
        query = " ".join(f"word{n}" for n in range(2_000))
        with ThreadPoolExecutor(1) as pool:
            search = pool.submit(httpx.post, f"{svc.url}/v1/memories/search", headers=headers,
                                 json={"query": query}, timeout=60)  # fmt: skip
            assert held.entered.wait(30)
            try:
                assert httpx.get(f"{svc.url}/health", timeout=10).json() == {"status": "ok"}  # while it embeds
            finally:
                held.release.set()
            assert search.result().status_code == 200
