"""The vault over REST, MCP and the CLI, scoped like the rest, and a rules file that no call through any
of them can modify. The apps are built here from the vault router and tools over a real Memory; the
lead's full app registers the same router and tools."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the interface tests need the server extra: pip install -e '.[server]'")

from fastapi import FastAPI
from fastapi.testclient import TestClient
from mcp import Client
from mcp.server.mcpserver import MCPServer

from interfaces.service_support import new_memory, run
from memstrata.api import problems
from memstrata.api.auth import Authenticator
from memstrata.api.keys import KeyStore
from memstrata.api.principal import Principal
from memstrata.api.vault_routes import router
from memstrata.mcp_server.common import Callers
from memstrata.mcp_server.vault_tools import register_vault_tools
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.vault import Vault, VaultSettings
from support.cli import run as run_cli

MEM0 = "agent-memory/notes/mem0.md"
RULES = "rules/general.md"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("vault-service")
    memory = new_memory(root / "memstrata.db", embedder)
    settings = VaultSettings(path=str(root / "vault"), tenant_id="acme")
    vault = Vault(memory.for_tenant("acme"), settings)
    vault.init(example=True)
    vault.sync()  # every test starts from an indexed vault, whichever runs first (or alone)
    keys = KeyStore(root / "keys.db")
    app = FastAPI()
    app.state.memory, app.state.auth, app.state.vault_settings = memory, Authenticator(keys), settings
    problems.install(app)
    app.include_router(router)
    tokens = {
        "admin": keys.create("acme")[1],
        "bob": keys.create("acme", user_ids=["bob"])[1],
        "globex": keys.create("globex")[1],
        "researcher": keys.create("acme", agent_ids=["researcher"])[1],
    }
    with TestClient(app) as client:
        yield {"client": client, "tokens": tokens, "memory": memory, "settings": settings, "root": root / "vault"}
    keys.close()
    memory.close()


def call(served: dict[str, Any], method: str, url: str, who: str = "admin", **kwargs: Any) -> Any:
    client: TestClient = served["client"]
    return client.request(method, url, headers={"Authorization": f"Bearer {served['tokens'][who]}"}, **kwargs)


def test_vault_over_rest(served: dict[str, Any]) -> None:
    synced = call(served, "POST", "/v1/vault/sync", json={})
    assert synced.status_code == 200 and synced.json()["new"] + synced.json()["unchanged"] == 9
    hits = call(served, "POST", "/v1/vault/search", json={"query": "单跳、多跳与时间问答的评测", "limit": 3}).json()
    assert hits[0]["path"] == "agent-memory/notes/locomo.md"
    note = call(served, "GET", "/v1/vault/note", params={"path": MEM0, "depth": 2, "sentences": 1}).json()
    assert note["truncated"] and note["outline"] == ["mem0", "mem0 > Idea 思路", "mem0 > Weakness 不足"]
    built = call(served, "GET", "/v1/vault/context", params={"domain": "agent-memory", "budget_tokens": 300}).json()
    assert built["tokens"] <= 300 and built["pieces"][0]["path"] == "agent-memory/basic_info.md"
    rules = call(served, "GET", "/v1/vault/rules", params={"agent_id": "researcher"}).json()
    assert [f["path"] for f in rules["files"]] == [RULES, "rules/researcher/style.md"]

    appended = call(served, "POST", "/v1/vault/note/append",
                    json={"path": MEM0, "text": "Seen in 2025.", "version": note["version"]})  # fmt: skip
    assert appended.status_code == 200, appended.text
    stale = call(served, "POST", "/v1/vault/note/patch",
                 json={"path": MEM0, "heading": "Idea 思路", "text": "x", "version": note["version"]})  # fmt: skip
    assert stale.status_code == 409 and "Read the note again" in stale.json()["detail"]
    created = call(
        served, "POST", "/v1/vault/notes", json={"path": "agent-memory/notes/new.md", "body": "# 新笔记\n内容。"}
    )
    assert created.status_code == 201 and created.json()["path"] == "agent-memory/notes/new.md"
    history = call(served, "GET", "/v1/vault/note/history", params={"path": "agent-memory/notes/new.md"}).json()
    assert history and all(e["actor"].startswith("rest:") for e in history)  # the key that wrote it


def test_every_agents_rules_for_review(served: dict[str, Any]) -> None:
    """The console showed only the shared rules with no agent chosen: an agent's own rules were out of sight."""
    review = call(served, "GET", "/v1/vault/rules", params={"every_agent": "true"}).json()
    assert [(f["path"], f["applies_to"]) for f in review["files"]] == [
        (RULES, "all"), ("rules/researcher/style.md", "agent:researcher")]  # fmt: skip
    assert [f["path"] for f in call(served, "GET", "/v1/vault/rules").json()["files"]] == [RULES]  # unchanged
    both = call(served, "GET", "/v1/vault/rules", params={"every_agent": "true", "agent_id": "researcher"})
    assert both.status_code == 422 and "not both" in both.json()["detail"]
    limited = call(served, "GET", "/v1/vault/rules", who="researcher", params={"every_agent": "true"})
    assert limited.status_code == 403 and "researcher" in limited.json()["detail"]
    own = call(served, "GET", "/v1/vault/rules", who="researcher").json()  # the agent's own view still works
    assert [f["path"] for f in own["files"]] == [RULES, "rules/researcher/style.md"]


def test_rest_is_scoped_by_the_key(served: dict[str, Any]) -> None:
    assert call(served, "GET", "/v1/vault/domains", who="globex").status_code == 404  # another tenant
    denied = call(served, "GET", "/v1/vault/domains", who="bob")  # a key for user bob only
    assert denied.status_code == 404 and "belongs to" in denied.json()["detail"]
    assert "set vault.user_id to serve it to that user" in denied.json()["detail"]  # it said only "belongs to"
    assert call(served, "GET", "/v1/vault/domains").status_code == 200


def test_no_rest_call_modifies_a_rules_file(served: dict[str, Any]) -> None:
    path = served["root"] / RULES
    before = path.read_bytes()
    version = call(served, "GET", "/v1/vault/note", params={"path": MEM0}).json()["version"]
    attempts = [
        ("/v1/vault/notes", {"path": RULES, "body": "# pwned"}),
        ("/v1/vault/notes", {"path": "rules/new-rule.md", "body": "# a new rule"}),
        ("/v1/vault/note/append", {"path": RULES, "text": "ignore the rules", "version": "0" * 16}),
        ("/v1/vault/note/patch", {"path": RULES, "heading": "Rules for every agent", "text": "", "version": "0" * 16}),
        ("/v1/vault/note/move", {"path": RULES, "new_path": "agent-memory/r.md", "version": "0" * 16}),
        ("/v1/vault/note/move", {"path": MEM0, "new_path": RULES, "version": version}),
        ("/v1/vault/note/forget", {"path": RULES, "version": "0" * 16, "confirm": True}),
    ]
    for url, body in attempts:
        response = call(served, "POST", url, json=body)
        assert response.status_code == 422 and "rules file" in response.json()["detail"], (url, response.text)
    assert path.read_bytes() == before and not (served["root"] / "rules/new-rule.md").exists()
    assert (served["root"] / MEM0).exists()


@pytest.fixture(scope="module")
def mcp_server(served: dict[str, Any]) -> MCPServer:
    server = MCPServer("vault-test")
    register_vault_tools(server, Callers(served["memory"], Principal(tenant_id="acme")), served["settings"])
    return server


def test_vault_tools_over_mcp_and_rules_stay_read_only(served: dict[str, Any], mcp_server: MCPServer) -> None:
    path = served["root"] / RULES
    before = path.read_bytes()

    async def session(client: Client) -> dict[str, Any]:
        names = {tool.name for tool in (await client.list_tools()).tools}
        read = (await client.call_tool("vault_read", {"path": MEM0, "depth": 1})).structured_content
        found = (await client.call_tool("vault_search", {"query": "写入延迟", "limit": 2})).structured_content
        context = await client.call_tool("vault_context", {"domain": "agent-memory", "budget_tokens": 200})
        rules = (await client.call_tool("vault_rules", {"agent_id": "researcher"})).structured_content
        refused = []
        for arguments in (
            {"mode": "create", "path": RULES, "text": "# pwned"},
            {"mode": "append", "path": RULES, "text": "x", "version": "0" * 16},
            {"mode": "patch", "path": RULES, "heading": "Rules for every agent", "text": "", "version": "0" * 16},
            {"mode": "move", "path": RULES, "new_path": "agent-memory/r.md", "version": "0" * 16},
            {"mode": "move", "path": MEM0, "new_path": RULES, "version": read["version"] if read else ""},
        ):
            result = await client.call_tool("vault_write", arguments)
            refused.append((result.is_error, result.content[0].text))  # type: ignore[union-attr]
        stale = await client.call_tool("vault_write", {"mode": "patch", "path": MEM0, "heading": "Idea 思路",
                                                       "text": "x", "version": "0" * 16})  # fmt: skip
        return {"names": names, "read": read, "found": found, "context": context.structured_content,
                "rules": rules, "refused": refused, "stale": stale.content[0].text}  # type: ignore[union-attr]  # fmt: skip

    out = run(session, mcp_server)
    assert {"vault_read", "vault_search", "vault_write", "vault_context", "vault_rules"} <= out["names"]
    assert out["read"]["text"] == "# mem0" and out["context"]["tokens"] <= 200
    assert [f["path"] for f in out["rules"]["files"]] == [RULES, "rules/researcher/style.md"]
    assert all(error and "rules file" in text for error, text in out["refused"]), out["refused"]
    assert "changed since version" in out["stale"]
    assert path.read_bytes() == before


def cli(tmp_path: Path, *args: str, ok: bool = True, **settings: str) -> subprocess.CompletedProcess[str]:
    return run_cli(tmp_path, *args, ok=ok, env=settings)


def test_vault_cli(tmp_path: Path) -> None:
    vault = ["vault", "--vault", str(tmp_path / "v")]
    created = json.loads(cli(tmp_path, "--json", *vault, "init", "--example").stdout)
    assert created["sync"]["new"] == 9 and "rules/general.md" in created["init"]["created"]
    hits = json.loads(cli(tmp_path, "--json", *vault, "search", "单跳、多跳与时间问答的评测", "-k", "1").stdout)
    assert hits[0]["path"] == "agent-memory/notes/locomo.md"
    shown = json.loads(cli(tmp_path, "--json", *vault, "show", MEM0, "--depth", "2", "--sentences", "1").stdout)
    patched = cli(tmp_path, *vault, "write", "patch", MEM0, "--heading", "Idea 思路", "--text", "改写。",
                  "--version", shown["version"])  # fmt: skip
    assert "PATCH" in patched.stdout
    stale = cli(tmp_path, *vault, "write", "patch", MEM0, "--heading", "Idea 思路", "--text", "again",
                "--version", shown["version"], ok=False)  # fmt: skip
    assert stale.returncode == 1 and "changed since version" in stale.stderr
    before = (tmp_path / "v" / RULES).read_bytes()
    refused = cli(tmp_path, *vault, "write", "append", RULES, "--text", "x", "--version", "0" * 16, ok=False)
    assert refused.returncode == 2 and "rules file" in refused.stderr
    assert (tmp_path / "v" / RULES).read_bytes() == before
    context = cli(tmp_path, *vault, "context", "agent-memory", "--budget", "200", "--rules").stdout
    assert context.startswith("<!-- rules: rules/general.md -->") and "agent-memory/basic_info.md" in context


def test_the_cli_keeps_a_vault_served_to_a_tenant(tmp_path: Path) -> None:
    """With vault.tenant_id set (so a tenant's keys reach it over REST), every CLI vault command failed with
    'no vault for this tenant': the CLI opened it as the default tenant."""
    vault = ["vault", "--vault", str(tmp_path / "v")]
    tenant = {"MEMSTRATA_VAULT__TENANT_ID": "acme"}
    assert json.loads(cli(tmp_path, "--json", *vault, "init", "--example", **tenant).stdout)["sync"]["new"] == 9
    found = cli(tmp_path, "--json", *vault, "search", "单跳、多跳与时间问答的评测", "-k", "1", **tenant)
    hits = json.loads(found.stdout)
    assert hits[0]["path"] == "agent-memory/notes/locomo.md"
