"""REST knowledge routes on a running server: multipart upload recorded under the upload's name, size and type
checks, collections list/show/remove, a source's Markdown and the text around a hit, key scopes; and in
keyless mode an upload is refused unless it carries the X-Memstrata-Client header (a page could send it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

import httpx

from interfaces.service_support import Service, service
from memstrata.providers.use_embedder import UniversalSentenceEncoder

GUIDE = (
    "# 入职指南\n\n## 门禁\n\n新员工的门禁卡在前台领取，需出示身份证。\n\n"
    "## Laptops\n\nLaptops are issued by IT on day one.\n"
)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    with service(tmp_path_factory.mktemp("knowledge-rest"), embedder, max_request_bytes=2_000_000) as running:
        running.memory.settings.ingest.max_upload_mb = 0.5  # a small limit to test against
        yield running


def _upload(svc: Service, token: str, name: str, body: bytes, **query: str) -> httpx.Response:
    return httpx.post(f"{svc.url}/v1/knowledge", params={"user_id": "u1", "collection": "onboarding", **query},
                      files={"file": (name, body, "application/octet-stream")}, headers=svc.auth(token),
                      timeout=120)  # fmt: skip


def test_upload_then_collections_source_and_around(keyed: Service) -> None:
    token = keyed.token("acme", users=["u1"])
    first = _upload(keyed, token, "guide.md", GUIDE.encode())
    assert first.status_code == 201, first.text
    assert first.json()["summary"]["added"] == 1
    assert first.json()["sources"][0]["source"] == "upload:guide.md"  # the upload's name, not a temp path
    again = _upload(keyed, token, "guide.md", GUIDE.encode())
    assert again.json()["summary"]["unchanged"] == 1

    auth, scope = keyed.auth(token), {"user_id": "u1"}
    listed = httpx.get(f"{keyed.url}/v1/knowledge/collections", params=scope, headers=auth).json()
    assert [(c["name"], c["sources"]) for c in listed] == [("onboarding", 1)]
    shown = httpx.get(f"{keyed.url}/v1/knowledge/collections/onboarding", params=scope, headers=auth).json()
    assert shown[0]["source"] == "upload:guide.md" and shown[0]["format"] == "md"
    source = httpx.get(f"{keyed.url}/v1/knowledge/source", headers=auth,
                       params={**scope, "collection": "onboarding", "source": "upload:guide.md"}).json()  # fmt: skip
    assert "门禁卡在前台领取" in source["markdown"]

    hits = httpx.post(f"{keyed.url}/v1/memories/search", headers=auth, timeout=60,
                      json={"query": "门禁卡在哪里领", "user_id": "u1", "filters": {"kind": "knowledge"}})  # fmt: skip
    memory_id = hits.json()[0]["memory"]["id"]
    around = httpx.get(f"{keyed.url}/v1/knowledge/chunks/{memory_id}/around", headers=auth,
                       params={**scope, "chars": 20}).json()  # fmt: skip
    assert "前台" in around["text"] and around["source"] == "upload:guide.md"

    other = keyed.token("acme", users=["u2"])  # a key for another user sees nothing of u1's
    refused = httpx.get(f"{keyed.url}/v1/knowledge/collections", params=scope, headers=keyed.auth(other))
    assert refused.status_code == 403

    unconfirmed = httpx.delete(f"{keyed.url}/v1/knowledge/collections/onboarding", params=scope, headers=auth)
    assert unconfirmed.status_code == 409
    removed = httpx.delete(f"{keyed.url}/v1/knowledge/collections/onboarding", headers=auth,
                           params={**scope, "confirm": "true"})  # fmt: skip
    assert removed.json()["sources"] == 1
    assert httpx.get(f"{keyed.url}/v1/knowledge/collections", params=scope, headers=auth).json() == []


def test_uploads_are_checked_for_type_and_size_and_bad_documents_fail_alone(keyed: Service) -> None:
    token = keyed.token("acme", users=["u1"])
    refused = _upload(keyed, token, "payload.exe", b"MZ...")
    assert refused.status_code == 422 and "not a supported document type" in refused.text
    assert _upload(keyed, token, "../../etc/passwd", b"root:x:0:0").status_code == 422
    too_big = _upload(keyed, token, "big.txt", b"a" * 600_000)
    assert too_big.status_code == 413 and "max_upload_mb" in too_big.text
    broken = _upload(keyed, token, "broken.docx", b"not a zip")
    assert broken.status_code == 422 and "cannot read broken.docx" in broken.text and "docx" in broken.text
    empty = _upload(keyed, token, "empty.md", b"")  # skipped, nothing stored: was a 201
    assert empty.status_code == 422 and "empty.md is empty" in empty.text


def test_form_fields_beside_the_file_are_refused_not_dropped(keyed: Service) -> None:
    """`collection=wanted` sent as a form field was dropped without a word: the document went to "default"."""
    token = keyed.token("acme", users=["u1"])
    sent = httpx.post(f"{keyed.url}/v1/knowledge", params={"user_id": "u1"}, headers=keyed.auth(token),
                      files={"file": ("k.txt", b"some words", "text/plain")},
                      data={"collection": "wanted", "chunker": "fixed"}, timeout=60)  # fmt: skip
    assert sent.status_code == 422, sent.text
    assert "form field 'chunker' is not read" in sent.text and "query string" in sent.text
    formless = httpx.post(f"{keyed.url}/v1/knowledge", params={"user_id": "u1"}, headers=keyed.auth(token),
                          data={"text": "no file"})  # fmt: skip
    assert formless.status_code == 422 and "multipart/form-data in a field named file" in formless.text  # was 415
    two = [("file", ("a.md", b"# A", "text/markdown")), ("file", ("b.md", b"# B", "text/markdown"))]
    both = httpx.post(f"{keyed.url}/v1/knowledge", params={"user_id": "u1"}, headers=keyed.auth(token), files=two)
    assert both.status_code == 422 and "one document per upload" in both.text  # a.md was dropped unsaid
    listed = httpx.get(f"{keyed.url}/v1/knowledge/collections", params={"user_id": "u1"}, headers=keyed.auth(token))
    assert "default" not in [c["name"] for c in listed.json()]


@pytest.fixture(scope="module")
def anon(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    with service(tmp_path_factory.mktemp("knowledge-keyless"), embedder, allow_anonymous_loopback=True) as running:
        yield running


def test_keyless_uploads_need_the_client_header(anon: Service, tmp_path: Path) -> None:
    files = {"file": ("page.md", GUIDE.encode(), "text/markdown")}
    params = {"user_id": "lin", "collection": "web"}
    from_a_page = httpx.post(f"{anon.url}/v1/knowledge", params=params, files=files)  # a form POST is "simple"
    assert from_a_page.status_code == 415
    assert anon.memory.knowledge.collections(user_id="lin") == []
    program = httpx.post(f"{anon.url}/v1/knowledge", params=params, files=files,
                         headers={"X-Memstrata-Client": "test"}, timeout=120)  # fmt: skip
    assert program.status_code == 201 and program.json()["summary"]["added"] == 1


def test_uploads_may_exceed_the_request_limit_up_to_max_upload_mb(anon: Service) -> None:
    """server.max_request_bytes (1 MiB here) bounds every request but document uploads (ingest.max_upload_mb)."""
    client = {"X-Memstrata-Client": "test"}
    body = ("# Notes\n\n" + "memstrata keeps long documents whole. " * 40_000).encode()  # ~1.5 MB
    assert len(body) > anon.memory.settings.server.max_request_bytes
    uploaded = httpx.post(f"{anon.url}/v1/knowledge", params={"user_id": "lin", "collection": "big"},
                          files={"file": ("big.md", body, "text/markdown")}, headers=client, timeout=300)  # fmt: skip
    assert uploaded.status_code == 201, uploaded.text
    too_big = httpx.post(f"{anon.url}/v1/memories", headers=client, timeout=60,
                         json={"user_id": "lin", "text": "x" * len(body)})  # fmt: skip
    assert too_big.status_code == 413
