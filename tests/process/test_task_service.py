"""Process memory over REST and MCP against a real server (uvicorn, real store, real embedder), scoped by the
API key like every other route."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from mcp import Client

from interfaces.service_support import Service, run, service, structured
from memstrata.providers.use_embedder import UniversalSentenceEncoder


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    with service(tmp_path_factory.mktemp("tasks"), embedder) as running:
        yield running


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def test_a_task_recorded_over_rest_is_recalled_and_guards_the_next_plan(svc: Service) -> None:
    http = httpx.Client(base_url=svc.url, headers=svc.auth(svc.token("ops")), timeout=60)
    scope = {"user_id": "u1"}
    started = {"goal": "订单服务发布后支付回调超时", "task_type": "debugging", **scope}
    task = _ok(http.post("/v1/tasks", json=started), 201)
    steps = f"/v1/tasks/{task['id']}/steps"
    misplaced = http.post(steps, json={"action": "run", "input": "x", **scope})  # the scope goes in the query here
    assert misplaced.status_code == 422 and "takes user_id in the query string" in misplaced.json()["detail"]
    logs = _ok(http.post(steps, params=scope, json={"action": "read", "input": "支付回调网关的超时日志",
                                                    "output": "回调在 30 秒后超时"}), 201)  # fmt: skip
    retry = _ok(http.post(steps, params=scope, json={"action": "run", "input": "把回调超时从 30 秒调到 60 秒",
                                                     "status": "running", "parent_id": logs["id"]}), 201)  # fmt: skip
    ended = _ok(http.patch(f"{steps}/{retry['id']}", params=scope,
                           json={"output": "依然超时", "status": "failed", "dead_end": True}))  # fmt: skip
    assert ended["dead_end"] and ended["ended_at"] is not None
    fixed = {"action": "run", "input": "修复回调签名校验里的时钟偏差", "hypothesis": "签名校验因时钟偏差失败",
             "confidence": 0.9}  # fmt: skip
    fix = _ok(http.post(steps, params=scope, json=fixed), 201)
    _ok(http.post(f"/v1/tasks/{task['id']}/hypotheses/{fix['hypothesis_id']}", params=scope,
                  json={"status": "supported", "evidence": [fix["id"]]}))  # fmt: skip
    patch = {"name": "时钟偏差修复补丁", "uri": "patches/clock-skew.diff", "step_id": fix["id"]}
    _ok(http.post(f"/v1/tasks/{task['id']}/artifacts", params=scope, json=patch), 201)
    done = _ok(http.post(f"/v1/tasks/{task['id']}/finish", params=scope, json={"outcome": "时钟偏差修复后回调正常"}))
    assert done["status"] == "succeeded" and done["compressed"]
    late = http.post(steps, params=scope, json={"action": "run", "input": "再试一次"})
    assert late.status_code == 409 and "start a new task" in late.json()["detail"]

    recalled = _ok(http.post("/v1/tasks/recall", json={"goal": "发布以后支付回调一直超时", **scope}))
    assert recalled[0]["task"]["id"] == task["id"]
    assert [s["id"] for s in recalled[0]["path"]] == [logs["id"], fix["id"]]
    plan = {"steps": [{"action": "run", "input": "把回调的超时时间调大到 60 秒"}], **scope}
    [warning] = _ok(http.post("/v1/tasks/check-plan", json=plan))
    assert warning["dead_end"]["id"] == retry["id"] and "依然超时" in warning["message"]
    tree = _ok(http.get(f"/v1/tasks/{task['id']}", params=scope))
    assert len(tree["steps"]) == 3 and tree["artifacts"][0]["uri"] == "patches/clock-skew.diff"
    mermaid = http.get(f"/v1/tasks/{task['id']}/tree", params={**scope, "format": "mermaid"})
    assert mermaid.status_code == 200 and mermaid.text.startswith("flowchart TD")
    assert _ok(http.get("/v1/tasks", params={**scope, "status": "succeeded"}))[0]["id"] == task["id"]
    assert http.get("/v1/tasks/strategies", params=scope).status_code == 200
    alternatives = _ok(http.get(f"{steps}/{retry['id']}/alternatives", params=scope))
    assert fix["id"] not in [a["sibling"]["id"] for a in alternatives]  # the fix is not retry's sibling
    bad = http.post(steps.replace(task["id"], "nope"), params=scope, json={"action": "Run!", "input": "x"})
    assert bad.status_code == 422

    other_tenant = httpx.get(f"{svc.url}/v1/tasks/{task['id']}", params=scope,
                             headers=svc.auth(svc.token("elsewhere")))  # fmt: skip
    assert other_tenant.status_code == 404
    other_user = httpx.get(f"{svc.url}/v1/tasks/{task['id']}", params=scope,
                           headers=svc.auth(svc.token("ops", users=["u2"])))  # fmt: skip
    assert other_user.status_code == 403


def test_an_agent_records_and_recalls_over_mcp(svc: Service) -> None:
    async def session(mcp: Client) -> dict[str, Any]:
        ids = {"user_id": "m1"}
        task = structured(await mcp.call_tool("task_start", {"goal": "Flaky checkout test in CI", "task_type":
                                                             "debugging", **ids}))  # fmt: skip
        step = structured(await mcp.call_tool("task_record_step", {
            "task_id": task["id"], "action": "run", "input": "rerun the checkout test 50 times", "dead_end": True,
            "output": "passes every time", **ids}))  # fmt: skip
        structured(
            await mcp.call_tool(
                "task_record_step",
                {"task_id": task["id"], "action": "run", "input": "freeze the clock in the checkout fixture", **ids},
            )
        )
        structured(await mcp.call_tool("task_finish", {"task_id": task["id"], "outcome": "fixed by freezing time",
                                                       **ids}))  # fmt: skip
        recalled = structured(await mcp.call_tool("task_recall", {"goal": "checkout test fails randomly", **ids}))
        warnings = structured(
            await mcp.call_tool(
                "task_check_plan",
                {"steps": [{"action": "run", "input": "rerun the flaky checkout test many times"}], **ids},
            )
        )
        shown = structured(await mcp.call_tool("task_show", {"task_id": task["id"][:8], **ids}))  # a shown prefix
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools if tool.name.startswith("task_")}
        return {"task": task, "step": step, "recalled": recalled, "warnings": warnings, "shown": shown, "tools": tools}

    out = run(session, f"{svc.url}/mcp", headers=svc.auth(svc.token("ops")))
    assert out["recalled"][0]["task"]["id"] == out["task"]["id"]
    assert out["warnings"][0]["dead_end"]["id"] == out["step"]["id"]
    assert out["step"]["status"] == "failed"  # a dead end failed, as step.dead_end() records it
    assert "✓ run: freeze the clock in the checkout fixture" in out["shown"]
    tools = out["tools"]
    assert set(tools) == {"task_start", "task_record_step", "task_update_step", "task_resolve_hypothesis",
                          "task_finish", "task_recall", "task_check_plan", "task_strategies", "task_show"}  # fmt: skip
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30 and "ctx" not in tool.input_schema["properties"]
    for name in ("task_recall", "task_check_plan", "task_strategies", "task_show"):
        assert tools[name].annotations.read_only_hint is True
    assert tools["task_record_step"].annotations.destructive_hint is False
