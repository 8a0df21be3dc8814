"""MCP through the SDK's own client: over streamable HTTP (with API keys) and over stdio (`memstrata mcp`)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pytest

pytest.importorskip("mcp", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from mcp import Client, StdioServerParameters
from service_support import Service, run, structured

# Not `-m memstrata.cli.app`: run as __main__, that module is a second copy of the app that the command
# modules (service_cmds) do not register on. `-m memstrata` runs the same entry point as the script.
CLI_ARGS = ["-m", "memstrata"]
TOOLS = {
    "add_memory", "search_memory", "get_memory", "list_memories", "update_memory", "delete_memory", "memory_history",
    "forget_memories", "review_pending", "confirm_memory", "reject_memory", "archive_memory", "restore_memory",
    "session_context", "end_session", "graph_neighbors", "graph_relation_history", "mark_memories_used",
    "vault_read", "vault_search", "vault_write", "vault_context", "vault_rules",
    "task_start", "task_record_step", "task_update_step", "task_resolve_hypothesis", "task_finish", "task_recall",
    "task_check_plan", "task_strategies", "task_show",
    "search_knowledge", "knowledge_around", "knowledge_collections",  # ingest_document: stdio only
    "memory_context", "deep_search_memory",
}  # fmt: skip


async def add_then_search(client: Client, **scope: str) -> dict[str, Any]:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    added = structured(await client.call_tool("add_memory", {"text": "我对花生过敏", **scope}))
    hits = structured(await client.call_tool("search_memory", {"query": "peanut allergy", "limit": 3, **scope}))
    return {"tools": tools, "added": added, "hits": hits}


def test_tools_are_described_typed_and_annotated(svc: Service) -> None:
    token = svc.token("acme", users=["mcp-user"])
    out = run(lambda c: add_then_search(c), f"{svc.url}/mcp", headers=svc.auth(token))
    tools = out["tools"]
    assert set(tools) == TOOLS
    assert tools["graph_neighbors"].input_schema["properties"]["hops"]["maximum"] == 6  # as REST (MCP said 4)

    async def add_two(client: Client) -> dict[str, Any]:  # a list of texts, as REST takes (it was refused)
        return structured(await client.call_tool("add_memory", {"text": ["Lin drinks oolong", "林晓住在杭州"],
                                                                "user_id": "mcp-user"}))  # fmt: skip

    assert len(run(add_two, f"{svc.url}/mcp", headers=svc.auth(token))["results"]) == 2

    async def add_dated(client: Client) -> dict[str, Any]:  # a key's value from a date, as REST takes (it was refused)
        return structured(await client.call_tool("add_memory", {"text": "SIFT1M", "key": "vecdb:dataset:primary",
                                                                "event_time": "2025-06-01T00:00:00+08:00",
                                                                "user_id": "mcp-user"}))  # fmt: skip

    dated = run(add_dated, f"{svc.url}/mcp", headers=svc.auth(token))["results"][0]["id"]
    assert svc.memory.for_tenant("acme").get(dated, user_id="mcp-user").event_time == datetime(
        2025, 5, 31, 16, tzinfo=UTC
    )
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30
        assert tool.input_schema["type"] == "object" and "ctx" not in tool.input_schema["properties"]
        assert tool.input_schema["additionalProperties"] is False
    assert tools["search_memory"].input_schema["required"] == ["query"]
    read_only = ("search_memory", "get_memory", "list_memories", "memory_history", "review_pending", "session_context",
                 "graph_neighbors", "graph_relation_history")  # fmt: skip
    for name in read_only:
        assert tools[name].annotations.read_only_hint is True
    for name in ("delete_memory", "update_memory", "forget_memories", "reject_memory"):
        assert tools[name].annotations.destructive_hint is True
    assert tools["add_memory"].annotations.destructive_hint is False

    # The key names one user, so the tools act for it without being told; the memory is in the key's tenant.
    memory_id = out["added"]["results"][0]["id"]
    assert out["hits"][0]["memory"]["id"] == memory_id
    assert svc.memory.for_tenant("acme").get(memory_id, user_id="mcp-user").text == "我对花生过敏"


def test_mcp_over_http_honours_keys_and_tenants(svc: Service) -> None:
    url = f"{svc.url}/mcp"
    refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"

    acme = svc.token("acme")
    added = run(lambda c: add_then_search(c, user_id="shared-id"), url, headers=svc.auth(acme))
    memory_id = added["added"]["results"][0]["id"]

    async def probe(client: Client) -> dict[str, Any]:
        scope = {"user_id": "shared-id"}
        return {
            "search": structured(await client.call_tool("search_memory", {"query": "花生", **scope})),
            "get": await client.call_tool("get_memory", {"memory_id": memory_id, **scope}),
            "delete": await client.call_tool("delete_memory", {"memory_id": memory_id, **scope}),
            "other_user": await client.call_tool("search_memory", {"query": "x", "user_id": "someone"}),
        }

    globex = run(probe, url, headers=svc.auth(svc.token("globex", users=["shared-id"])))
    assert globex["search"] == []
    assert globex["get"].is_error and "no memory" in globex["get"].content[0].text
    assert globex["delete"].is_error
    assert globex["other_user"].is_error and "limited to" in globex["other_user"].content[0].text
    assert svc.memory.for_tenant("acme").get(memory_id, user_id="shared-id").status.value == "active"


def test_an_agent_limited_key_reads_no_other_agents_memories_through_context(svc: Service) -> None:
    """A user trial: context() reads a user's memories from every agent, and a key limited to one agent read the
    other agents' (a bank PIN) through memory_context and /v1/context, where search and get refused them."""
    view = svc.memory.for_tenant("acme")
    secret = view.add("Bob's bank PIN is 4321 银行密码", user_id="ctx-bob", agent_id="banker").results[0].id
    mine = view.add("Bob's bank branch is on Main Street", user_id="ctx-bob", agent_id="planner").results[0].id
    headers = svc.auth(svc.token("acme", agents=["planner"]))

    question = {"query": "Bob bank PIN 银行密码", "user_id": "ctx-bob"}

    async def context(client: Client) -> dict[str, Any]:
        return structured(await client.call_tool("memory_context", {**question, "agent_id": "planner"}))

    over_mcp = run(context, f"{svc.url}/mcp", headers=headers)
    over_rest = httpx.post(f"{svc.url}/v1/context", headers=headers, json=question).json()
    for answer in (over_mcp, over_rest):
        assert mine in answer["citations"] and secret not in answer["citations"], answer["citations"]
        assert "4321" not in answer["text"]
    # a key for every agent still reads the user's memories from all of them, as context() promises
    every_agent = httpx.post(f"{svc.url}/v1/context", headers=svc.auth(svc.token("acme")),
                             json={**question, "agent_id": "planner"}).json()  # fmt: skip
    assert {secret, mine} <= set(every_agent["citations"])


def test_mcp_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*CLI_ARGS, "--db", str(tmp_path / "stdio.db"), "mcp", "--user", "desk"],
        cwd=str(tmp_path),
    )

    async def session(client: Client) -> dict[str, Any]:
        out = await add_then_search(client)
        memory_id = out["added"]["results"][0]["id"]
        update = {"memory_id": memory_id, "text": "我对花生和腰果过敏", "reason": "more detail"}
        out["updated"] = structured(await client.call_tool("update_memory", update))
        out["history"] = structured(await client.call_tool("memory_history", {"memory_id": memory_id}))
        out["listed"] = structured(await client.call_tool("list_memories", {}))
        out["bad"] = await client.call_tool("get_memory", {"memory_id": "nope"})
        out["other_user"] = await client.call_tool("search_memory", {"query": "花生", "user_id": "someone-else"})
        return out

    out = run(session, params)
    assert set(out["tools"]) == TOOLS | {"ingest_document"}  # a local client may have its files read
    assert out["hits"][0]["memory"]["text"] == "我对花生过敏" and out["hits"][0]["memory"]["scope"]["user_id"] == "desk"
    assert [event["action"] for event in out["history"]] == ["ADD", "UPDATE"]
    assert [item["text"] for item in out["listed"]] == ["我对花生和腰果过敏"]
    assert out["bad"].is_error and "no memory nope" in out["bad"].content[0].text
    refused = out["other_user"].content[0].text  # the limit is the process's own --user: no key to point at
    assert out["other_user"].is_error and "started with --user" in refused and "API key" not in refused


def test_get_and_delete_are_refused_so_no_stream_holds_a_request_slot(svc: Service) -> None:
    """Stateless JSON MCP answers POST only. A GET used to open a server-sent event stream that never ended
    and kept one of the service's request slots: 32 of them answered 503 to every tenant."""
    headers = svc.auth(svc.token("acme"))
    for method in ("GET", "DELETE"):
        refused = httpx.request(method, f"{svc.url}/mcp", headers=headers, timeout=5)
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
        assert refused.json()["code"] == "method_not_allowed"
    listed = run(lambda c: c.list_tools(), f"{svc.url}/mcp", headers=headers)  # the SDK's client copes with the 405
    assert "add_memory" in {tool.name for tool in listed.tools}


def test_unknown_arguments_are_refused_by_name_and_bad_values_explained_in_one_line(svc: Service) -> None:
    """add_memory dropped arguments it does not take (confidence, a misspelt user id) and stored the memory as
    if they were used; a bad value came back as pydantic's multi-line report with a link; kind and key were
    silently ignored with infer=True."""
    token = svc.token("acme", users=["strict-user"])

    turn = {"role": "user", "content": "hello"}
    unused = {"mode": "create", "path": "d/n.md", "text": "x", "version": "abc", "new_path": "d/z.md"}

    async def calls(client: Client) -> dict[str, Any]:
        return {
            "unknown": await client.call_tool("add_memory", {"text": "Lin likes tea", "confidence": 0.4}),
            "bad": await client.call_tool("search_memory", {"query": "tea", "limit": "many"}),
            # JSON's true is not the count 1 and "3" is not a number: refused as REST refuses them.
            "true_limit": await client.call_tool("search_memory", {"query": "tea", "limit": True}),
            "string_limit": await client.call_tool("search_memory", {"query": "tea", "limit": "3"}),
            "string_flag": await client.call_tool("add_memory", {"text": "Lin likes tea", "infer": "yes"}),
            # REST refuses both at once; MCP stored the turn and dropped the text
            "both": await client.call_tool("add_memory", {"text": "IMPORTANT", "messages": [turn]}),
            "bad_kind": await client.call_tool("search_memory", {"query": "tea", "kinds": ["BAD KIND"]}),
            "task_type": await client.call_tool("task_start", {"goal": "fix the build", "task_type": "Debugging"}),
            "unused": await client.call_tool("vault_write", unused),
            "ignored": await client.call_tool("add_memory", {"text": "Lin likes tea", "infer": True, "kind": "x"}),
            "listed": await client.call_tool("list_memories", {}),
        }

    out = run(calls, f"{svc.url}/mcp", headers=svc.auth(token))
    unknown = out["unknown"].content[0].text
    assert out["unknown"].is_error and "unknown argument(s) 'confidence'" in unknown and "text" in unknown
    bad = out["bad"].content[0].text
    assert out["bad"].is_error and "limit:" in bad and "\n" not in bad and "errors.pydantic.dev" not in bad
    assert out["ignored"].is_error and "kind" in out["ignored"].content[0].text
    for name, argument, shown in (("true_limit", "limit", "true"), ("string_limit", "limit", '"3"')):
        text = out[name].content[0].text
        assert out[name].is_error and f"{argument}: expected integer" in text and f"got {shown}" in text, text
    assert out["string_flag"].is_error and "infer: expected boolean" in out["string_flag"].content[0].text
    assert out["both"].is_error and "either text or messages" in out["both"].content[0].text
    bad_kind = out["bad_kind"].content[0].text
    assert out["bad_kind"].is_error and "'BAD KIND' must be a lowercase identifier" in bad_kind
    assert "Value error" not in bad_kind  # our validator's words, not pydantic's wrapping
    assert out["task_type"].is_error and "task_type 'Debugging'" in out["task_type"].content[0].text
    assert out["unused"].is_error and "does not use new_path, version" in out["unused"].content[0].text
    assert structured(out["listed"]) == []  # nothing was stored by the refused calls


def test_stdio_answers_a_line_it_cannot_read_and_goes_on(tmp_path: Path) -> None:
    """A request holding a lone surrogate, a line that is not JSON and an object that is no JSON-RPC message each
    get an error naming what to fix. The SDK's transport dropped them, so the client waited for ever."""
    server = subprocess.Popen(
        [sys.executable, *CLI_ARGS, "--db", str(tmp_path / "stdio.db"), "mcp", "--user", "desk"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(tmp_path),
    )  # fmt: skip
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}),
        '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        r'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_memory", "arguments": {"text": "x\ud800y"}}}',  # noqa: E501
        "hello",
        '{"jsonrpc": "2.0", "id": "five"}',
        '{"jsonrpc": "2.0", "id": 6, "method": "ping"}',
    ]
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(line + "\n" for line in lines).encode())
        server.stdin.flush()
        read = _Lines(server.stdout)
        answers = [read.answer(deadline=time.monotonic() + 60) for _ in range(5)]
    finally:
        server.kill()
        server.wait()
    by_id = {answer["id"]: answer for answer in answers}
    assert by_id[0]["result"]["serverInfo"]["name"] == "memstrata"
    assert by_id[1]["error"]["code"] == -32700 and "unpaired surrogate" in by_id[1]["error"]["message"]
    assert by_id[None]["error"]["code"] == -32700 and "not JSON" in by_id[None]["error"]["message"]
    assert by_id["five"]["error"]["code"] == -32600 and '"method"' in by_id["five"]["error"]["message"]
    assert by_id[6]["result"] == {}  # still serving


class _Lines:
    """The server's answers, a line each, read from the pipe itself: a buffered readline took every line the server
    had written at once, and select() then waited on an empty pipe for answers already read (the test failed under
    load, when the server's five answers came in one write)."""

    def __init__(self, stdout: IO[bytes]) -> None:
        self._fd = stdout.fileno()
        self._pending = b""

    def answer(self, deadline: float) -> dict[str, Any]:
        while b"\n" not in self._pending:
            if time.monotonic() >= deadline:
                raise AssertionError("no answer within 60 s: the server dropped a line")
            if select.select([self._fd], [], [], 0.5)[0]:
                chunk = os.read(self._fd, 65536)
                assert chunk, "the server closed stdout"
                self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer


def test_ending_a_session_hands_its_waiting_turns_to_extraction(svc: Service) -> None:
    """A user trial over MCP: a short session added with infer waited for more turns, and MCP had no way to say the
    conversation was over (REST and Python do), so its facts waited until someone ran maintenance."""
    token = svc.token("acme", users=["kai"])
    turns = [{"role": "user", "content": "每周三晚上我去打羽毛球", "timestamp": "2025-03-15T11:00:00+08:00"}]

    async def session(client: Client) -> dict[str, Any]:
        added = await client.call_tool("add_memory", {"messages": turns, "session_id": "s2", "infer": True})
        ended = await client.call_tool("end_session", {"session_id": "s2"})
        return {"added": structured(added), "ended": structured(ended)}

    out = run(session, f"{svc.url}/mcp", headers=svc.auth(token))
    [job] = out["ended"]
    assert job["id"] == out["added"]["job_id"] and job["status"] in ("queued", "running", "done"), job
