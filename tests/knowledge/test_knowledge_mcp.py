"""MCP knowledge tools through the SDK's client: a local (in-process, like stdio) server ingests a folder and
finds the right chunk with its provenance; over HTTP with a key, ingest_document is not offered (a remote caller
must not make the server read its files) while search_knowledge works."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the service tests need the server extra: pip install -e '.[server]'")

from mcp import Client

from interfaces.service_support import Service, run, service, structured
from memstrata import Memory
from memstrata.api.principal import Principal
from memstrata.mcp_server.server import build_server
from memstrata.providers.use_embedder import UniversalSentenceEncoder

KNOWLEDGE_TOOLS = {"search_knowledge", "knowledge_around", "knowledge_collections", "ingest_document"}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "policy.md").write_text(
        "# 报销\n\n## 出租车\n\n出租车费用需要保留发票，每月五号前提交。\n", encoding="utf-8"
    )
    (docs / "it.txt").write_text("VPN access is requested through the IT portal.\n", encoding="utf-8")
    (docs / "empty.md").write_text("", encoding="utf-8")  # skipped, with the reason (it was a bare count)
    return docs


def test_a_local_client_ingests_and_searches_knowledge(memory: Memory, folder: Path) -> None:
    server = build_server(memory, local=Principal(tenant_id=None))

    async def session(client: Client) -> dict[str, Any]:
        names = {tool.name for tool in (await client.list_tools()).tools}
        desk = {"user_id": "desk"}
        ingest = {"path": str(folder), "collection": "ops", **desk}
        ingested = structured(await client.call_tool("ingest_document", ingest))
        question = {"query": "出租车发票什么时候交", "collection": "ops", **desk}
        hits = structured(await client.call_tool("search_knowledge", question))
        near = {"memory_id": hits[0]["memory_id"], "chars": 10, **desk}
        around = structured(await client.call_tool("knowledge_around", near))
        listed = structured(await client.call_tool("knowledge_collections", {"user_id": "desk"}))
        return {"names": names, "ingested": ingested, "hits": hits, "around": around, "listed": listed}

    out = run(session, server)
    assert out["names"] >= KNOWLEDGE_TOOLS
    assert out["ingested"]["summary"]["added"] == 2 and out["ingested"]["failed"] == {}
    assert list(out["ingested"]["skipped"].values()) == ["empty.md is empty"]
    top = out["hits"][0]
    assert "五号前提交" in top["text"] and top["source"].endswith("policy.md") and top["heading_path"][-1] == "出租车"
    assert "发票" in out["around"]["text"]
    assert [(c["name"], c["sources"]) for c in out["listed"]] == [("ops", 2)]


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    with service(tmp_path_factory.mktemp("knowledge-mcp"), embedder) as running:
        yield running


def test_over_http_ingest_document_is_refused(keyed: Service, folder: Path) -> None:
    keyed.memory.for_tenant("acme").ingest(folder, collection="ops", user_id="u1")
    token = keyed.token("acme", users=["u1"])

    async def session(client: Client) -> dict[str, Any]:
        refused = await client.call_tool("ingest_document", {"path": "/etc", "user_id": "u1"})
        hits = structured(await client.call_tool("search_knowledge", {"query": "VPN portal", "user_id": "u1"}))
        names = {tool.name for tool in (await client.list_tools()).tools}
        return {"refused": refused, "hits": hits, "names": names}

    out = run(session, f"{keyed.url}/mcp", headers=keyed.auth(token))
    assert out["refused"].is_error and "local (stdio)" in out["refused"].content[0].text
    assert "ingest_document" not in out["names"] and "search_knowledge" in out["names"]  # not offered at all
    assert out["hits"][0]["source"].endswith("it.txt")
