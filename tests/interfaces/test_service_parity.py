"""The same add → search through Python, the CLI, REST and MCP gives the same hits.

Each interface gets its own fresh store (keyword statistics are per store), the same texts in the
same order (one add per text, except the CLI, which takes them in one batch), and the same query;
the ranked texts must match exactly and the scores closely (the lifecycle part of a score moves a
little with the seconds between add and search).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from mcp import Client
from service_support import Service, run, service, structured

from memstrata.providers.use_embedder import UniversalSentenceEncoder

TEXTS = [
    "我喜欢喝乌龙茶",
    "I play tennis on Sundays",
    "My sister lives in Hangzhou",
    "用户对花生过敏",
    "Prefers green tea in the afternoon",
]
QUERY = "what kind of tea do I drink?"
Hits = list[tuple[str, float]]


def ranked(hits: list[dict[str, Any]]) -> Hits:
    return [(str(hit["memory"]["text"]), float(hit["score"])) for hit in hits]


def via_python(directory: Path, embedder: UniversalSentenceEncoder) -> Hits:
    from service_support import new_memory

    with new_memory(directory / "py.db", embedder) as memory:
        for text in TEXTS:
            memory.add(text, user_id="parity")
        return [(hit.text, hit.score) for hit in memory.search(QUERY, user_id="parity", limit=5)]


def via_cli(directory: Path) -> Hits:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    base = [sys.executable, "-m", "memstrata", "--json", "--db", str(directory / "c.db")]
    # One process for all texts: each CLI start loads the embedder (seconds), and a batch stores the same rows.
    subprocess.run([*base, "add", *TEXTS, "--user", "parity"], check=True, env=env, cwd=directory, capture_output=True)
    out = subprocess.run(
        [*base, "search", QUERY, "--user", "parity", "-k", "5"], env=env, cwd=directory, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return ranked(json.loads(out.stdout))


def via_rest(svc: Service) -> Hits:
    # As generous as the MCP client in service_support: on a busy 2-core machine (the suite runs two workers) an
    # embedding request can exceed httpx's 5 s default, and this test is about equal results, not latency.
    with httpx.Client(base_url=svc.url, headers=svc.auth(svc.token("t")), timeout=60) as http:
        for text in TEXTS:
            http.post("/v1/memories", json={"text": text, "user_id": "parity"}).raise_for_status()
        return ranked(http.post("/v1/memories/search", json={"query": QUERY, "user_id": "parity", "limit": 5}).json())


def via_mcp(svc: Service) -> Hits:
    async def session(client: Client) -> Hits:
        for text in TEXTS:
            structured(await client.call_tool("add_memory", {"text": text}))
        result = await client.call_tool("search_memory", {"query": QUERY, "limit": 5})
        return ranked(structured(result))

    return run(session, f"{svc.url}/mcp", headers=svc.auth(svc.token("t", users=["parity"])))


def test_same_hits_through_every_interface(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    results = {"python": via_python(tmp_path, embedder), "cli": via_cli(tmp_path)}
    with service(tmp_path / "rest", embedder) as rest:
        results["rest"] = via_rest(rest)
    with service(tmp_path / "mcp", embedder) as mcp:
        results["mcp"] = via_mcp(mcp)

    expected = results["python"]
    assert {text for text, _ in expected[:2]} == {"Prefers green tea in the afternoon", "我喜欢喝乌龙茶"}
    for name, hits in results.items():
        assert [text for text, _ in hits] == [text for text, _ in expected], name
        assert [score for _, score in hits] == pytest.approx([score for _, score in expected], rel=1e-3), name
