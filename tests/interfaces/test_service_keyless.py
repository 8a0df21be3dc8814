"""Keyless mode (--allow-anonymous-loopback) against what a web page in a browser on the same machine can send.

Each attack is sent the way a browser would send it (DNS rebinding: a foreign Host; a cross-site "simple"
request: a form POST or a body-less POST with an Origin header), and the store is checked afterwards: no
state changed. Programs on the machine keep working: JSON requests, or any request with the client header.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx
from service_support import Service, run, service, structured

from memstrata.providers.use_embedder import UniversalSentenceEncoder

EVIL = "https://evil.example.com"


@pytest.fixture(scope="module")
def anon(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    with service(tmp_path_factory.mktemp("keyless"), embedder, allow_anonymous_loopback=True) as running:
        running.memory.add("林晓对花生过敏", user_id="lin")
        yield running


def _lin_count(anon: Service) -> int:
    return len(anon.memory.get_all(user_id="lin"))


@pytest.mark.parametrize("host", ["evil.example.com", "evil.example.com:8765", "192.168.1.5", "localhost.evil.com"])
def test_a_foreign_host_reads_and_writes_nothing(anon: Service, host: str) -> None:
    before = _lin_count(anon)
    headers = {"Host": host}
    read = httpx.get(f"{anon.url}/v1/memories", params={"user_id": "lin"}, headers=headers)
    assert read.status_code == 403 and read.json()["code"] == "host_not_allowed" and "林晓" not in read.text
    write = httpx.post(f"{anon.url}/v1/memories", json={"user_id": "lin", "text": "rebound"}, headers=headers)
    assert write.status_code == 403
    erase = httpx.post(f"{anon.url}/v1/users/lin/erase?confirm=true", json={}, headers=headers)
    assert erase.status_code == 403
    mcp = httpx.post(f"{anon.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
    assert mcp.status_code == 403
    assert _lin_count(anon) == before


@pytest.mark.parametrize(
    ("path", "content", "headers"),
    [
        ("/v1/users/lin/erase?confirm=true", None, {"Origin": EVIL}),  # body-less POST from a page
        ("/v1/users/lin/erase?confirm=true", None, {}),  # no Origin at all (old browsers, some redirects)
        ("/v1/users/lin/erase?confirm=true", None, {"Sec-Fetch-Site": "cross-site"}),
        ("/v1/memories", '{"user_id": "lin", "text": "x"}', {"Content-Type": "text/plain", "Origin": EVIL}),
        ("/v1/memories", '{"user_id": "lin", "text": "x"}', {"Content-Type": "text/plain"}),  # form-like
        ("/v1/forget", "what=peanuts&confirm=true", {"Content-Type": "application/x-www-form-urlencoded"}),
    ],
)
def test_cross_site_simple_requests_change_nothing(anon: Service, path: str, content: str | None,
                                                   headers: dict[str, str]) -> None:  # fmt: skip
    before = _lin_count(anon)
    response = httpx.post(f"{anon.url}{path}", content=content, headers=headers)
    assert response.status_code in (403, 415), response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert _lin_count(anon) == before
    assert anon.memory.messages(user_id="lin", limit=10) == [] and before >= 1


def test_a_foreign_origin_cannot_read_either(anon: Service) -> None:
    response = httpx.get(f"{anon.url}/v1/memories", params={"user_id": "lin"}, headers={"Origin": EVIL})
    assert response.status_code == 403 and response.json()["code"] == "cross_site_refused"


def test_programs_on_this_machine_still_work(anon: Service) -> None:
    base = anon.url
    for host in (None, "localhost:1", "127.0.0.1", "[::1]:8765"):
        headers = {"Host": host} if host else {}
        assert httpx.get(f"{base}/v1/memories", params={"user_id": "lin"}, headers=headers).status_code == 200
    added = httpx.post(f"{base}/v1/memories", json={"user_id": "tmp", "text": "a note"}, headers={"Origin": base})
    assert added.status_code == 201
    with_header = httpx.post(f"{base}/v1/users/tmp/erase?confirm=true", headers={"X-Memstrata-Client": "cli"})
    assert with_header.status_code == 200 and anon.memory.get_all(user_id="tmp") == []
    tools = run(lambda client: client.list_tools(), f"{base}/mcp")
    assert "add_memory" in {tool.name for tool in tools.tools}
    found = run(lambda client: client.call_tool("search_memory", {"query": "花生", "user_id": "lin"}), f"{base}/mcp")
    assert "花生" in str(structured(found))


def test_docs_work_offline(anon: Service, tmp_path: Path) -> None:
    """The docs pages load their scripts from this server: nothing from a CDN."""
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{anon.url}{page}").text
        assert "cdn" not in html.lower() and "https://" not in html.replace("https://fastapi", "")
        scripts = [part.split('"')[0] for part in html.split('src="')[1:]]
        assert scripts and all(script.startswith("/docs-assets/") for script in scripts)
        for script in scripts:
            asset = httpx.get(f"{anon.url}{script}")
            assert asset.status_code == 200 and len(asset.content) > 100_000
    assert httpx.get(f"{anon.url}/docs-assets/swagger-ui.css").status_code == 200
