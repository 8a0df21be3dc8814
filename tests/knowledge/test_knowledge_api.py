"""``memory.knowledge`` and ``memory.ingest`` on both backends with the real embedder: sources in the sources
table beside their chunks, versions on change, the text around a hit, tenant views, removal, and URLs
fetched from a local HTTP server (no internet here)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from memstrata import Memory
from memstrata.errors import ConfirmationRequiredError, InvalidInputError, NotFoundError
from memstrata.storage.knowledge_protocol import SourceStatus

HANDBOOK = (
    "# 员工手册\n\n## 休假\n\n年假为每年十五天，须提前两周申请。\n\n"
    "## Travel\n\nTrains over four hours may be booked in first class. Taxis need a receipt.\n"
)
NOTES = "# Warehouse\n\nThe Denver warehouse door code is 4471.\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (folder / "notes.txt").write_text(NOTES, encoding="utf-8")
    return folder


def test_ingest_lists_sources_and_shows_the_text_around_a_hit(memory: Memory, docs: Path) -> None:
    report = memory.ingest(docs, collection="手册", user_id="u1")
    assert report.count("added") == 2 and not report.failed
    assert [(c.name, c.sources) for c in memory.knowledge.collections(user_id="u1")] == [("手册", 2)]
    listed = memory.knowledge.sources("手册", user_id="u1")
    assert [Path(s.source).name for s in listed] == ["handbook.md", "notes.txt"]
    stored = memory.knowledge.source("手册", listed[0].source, user_id="u1")
    assert "年假为每年十五天" in stored.markdown and stored.version == 1  # Chinese stays Chinese

    hit = memory.search("年假有几天", user_id="u1", filters={"kind": "knowledge"}, limit=1)[0]
    around = memory.knowledge.around(hit.id, chars=40, user_id="u1")
    assert "十五天" in around.text and around.heading_path[-1] == "休假"
    assert around.text == stored.markdown[around.span[0] : around.span[1]]
    assert around.before == stored.markdown[max(0, around.span[0] - 40) : around.span[0]]
    with pytest.raises(InvalidInputError, match="chars"):  # -5 was read as no context (a user trial; MCP refused it)
        memory.knowledge.around(hit.id, chars=-5, user_id="u1")

    again = memory.ingest(docs, collection="手册", user_id="u1")
    assert again.count("unchanged") == 2 and again.embedded == 0  # nothing converted or embedded


def test_a_changed_file_gets_a_new_version_and_old_hits_still_show_their_text(memory: Memory, docs: Path) -> None:
    memory.ingest(docs, collection="ops", user_id="u1")
    old_hit = memory.search("Denver warehouse door code", user_id="u1", filters={"kind": "knowledge"}, limit=1)[0]
    (docs / "notes.txt").write_text(NOTES.replace("4471", "8812"), encoding="utf-8")
    report = memory.ingest(docs, collection="ops", user_id="u1")
    assert report.count("replaced") == 1 and report.count("unchanged") == 1
    source = (docs / "notes.txt").absolute().as_posix()
    versions = memory.store.knowledge.source_versions(memory.resolve_scope(user_id="u1"), "ops", source)
    assert [(v.version, v.status) for v in versions] == [(1, SourceStatus.RETIRED), (2, SourceStatus.ACTIVE)]
    assert "8812" in memory.knowledge.source("ops", source, user_id="u1").markdown
    assert "4471" in memory.knowledge.around(old_hit.id, user_id="u1").text  # the version it was cut from


def test_tenant_views_and_scopes_never_see_each_others_collections(memory: Memory, docs: Path) -> None:
    acme = memory.for_tenant("acme")
    acme.ingest(docs, collection="shared-name", user_id="u1")
    assert memory.knowledge.collections(user_id="u1") == []
    assert [c.name for c in acme.knowledge.collections(user_id="u1")] == ["shared-name"]
    with pytest.raises(NotFoundError):
        memory.knowledge.sources("shared-name", user_id="u1")
    assert memory.for_tenant("other").knowledge.collections(user_id="u1") == []


def test_remove_needs_confirmation_then_takes_sources_and_chunks_out_of_search(memory: Memory, docs: Path) -> None:
    memory.ingest(docs, collection="tmp", user_id="u1")
    with pytest.raises(ConfirmationRequiredError):
        memory.knowledge.remove("tmp", user_id="u1")
    removed = memory.knowledge.remove("tmp", confirm=True, user_id="u1")
    assert removed.sources == 2 and removed.chunks >= 2
    assert memory.knowledge.collections(user_id="u1") == []
    assert memory.search("Denver door code", user_id="u1", filters={"kind": "knowledge"}) == []
    again = memory.ingest(docs, collection="tmp", user_id="u1")  # a removed collection can be ingested anew
    assert again.count("added") == 2


class _Site(BaseHTTPRequestHandler):
    pages: ClassVar[dict[str, tuple[str, bytes]]] = {}

    def do_GET(self) -> None:
        found = self.pages.get(self.path)
        if found is None:
            self.send_error(404)
            return
        content_type, body = found
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    _Site.pages = {
        "/wiki/policy": ("text/html; charset=utf-8", "<html><head><title>报销政策</title></head><body><h1>报销政策"
                         "</h1><p>出租车费用需要保留发票，每月五号前提交。</p></body></html>".encode()),
        "/big.txt": ("text/plain", b"x" * (2 * 1024 * 1024)),
    }  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    # serve_forever notices shutdown() between polls: 10 ms, not its default half second per test
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_url_is_fetched_and_recorded_under_its_address(memory: Memory, site: str) -> None:
    url = f"{site}/wiki/policy"
    report = memory.ingest(url, collection="web", user_id="u1")
    assert report.count("added") == 1, report.outcomes
    hit = memory.search("出租车发票", user_id="u1", filters={"kind": "knowledge"}, limit=1)[0]
    assert hit.memory.metadata["source"] == url and "五号前提交" in hit.text
    assert memory.knowledge.source("web", url, user_id="u1").format == "html"
    assert memory.ingest(url, collection="web", user_id="u1").count("unchanged") == 1

    missing = memory.ingest(f"{site}/nowhere", collection="web", user_id="u1")
    assert "HTTP 404" in (missing.failed[0].error or "")


def test_a_url_over_the_size_limit_fails_alone(memory: Memory, site: str) -> None:
    limited = Memory(memory.store, memory.embedder,
                     settings=memory.settings.model_copy(update={"ingest": memory.settings.ingest.model_copy(
                         update={"max_url_mb": 1.0})}))  # fmt: skip
    report = limited.ingest(f"{site}/big.txt", collection="web", user_id="u1")
    assert report.failed and "max_url_mb" in (report.failed[0].error or "")
    assert limited.knowledge.collections(user_id="u1") == []


def test_the_agentic_chunker_without_a_configured_model_is_refused_up_front(memory: Memory, docs: Path) -> None:
    with pytest.raises(InvalidInputError, match="agentic chunker needs a model"):
        memory.ingest(docs, collection="x", chunker="agentic", user_id="u1")
    with pytest.raises(InvalidInputError, match="chunker"):
        memory.ingest(docs, collection="x", chunker="magic", user_id="u1")
    assert memory.knowledge.collections(user_id="u1") == []


def test_chunks_from_before_the_sources_table_are_redone_once(memory: Memory, docs: Path) -> None:
    (docs / "gone.md").write_text("# Gone\n\nThis file is indexed, then removed.\n", encoding="utf-8")
    memory.ingest(docs, collection="old", user_id="u1")
    before = {item.id for item in memory.get_all(user_id="u1", filters={"kind": "knowledge"}, limit=100)}
    # A store ingested before the sources table existed: chunks, and no source rows.
    memory.store.dialect.transaction(lambda tx: tx.execute("DELETE FROM knowledge_sources"))  # type: ignore[attr-defined]
    (docs / "gone.md").unlink()
    redone = memory.ingest(docs, collection="old", user_id="u1")
    assert (redone.count("replaced"), redone.count("retired")) == (2, 1)
    after = {item.id for item in memory.get_all(user_id="u1", filters={"kind": "knowledge"}, limit=100)}
    assert after and before.isdisjoint(after)  # old chunks superseded or retired, not left beside the new ones
    assert [s.sources for s in memory.knowledge.collections(user_id="u1")] == [2]
    again = memory.ingest(docs, collection="old", user_id="u1")
    assert (again.count("unchanged"), again.embedded) == (2, 0)


def test_a_script_without_a_main_guard_runs_once_when_it_ingests(tmp_path: Path) -> None:
    """The converter child was a multiprocessing "spawn" child, which imports the caller's main module: a script
    written as the README shows, without ``if __name__ == "__main__":``, ran again inside it (its adds too)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Deploy\n\nSet DATABASE_URL before starting the service.\n", encoding="utf-8")
    script = tmp_path / "ingest_me.py"
    script.write_text(
        "from memstrata import Memory\n"
        "print('script body runs', flush=True)\n"
        f"m = Memory.from_config({{'store': {{'path': {str(tmp_path / 'k.db')!r}}}, 'llm': {{'provider': 'rules'}}}})\n"
        f"r = m.ingest({str(docs)!r}, collection='kb', user_id='lin')\n"
        "print([o.status for o in r.outcomes], flush=True)\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.count("script body runs") == 1
    assert "error" not in ran.stdout.splitlines()[-1]
