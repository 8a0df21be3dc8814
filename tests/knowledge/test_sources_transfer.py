"""Knowledge sources travel with their chunks: JSONL export/import into a fresh store, and ``memstrata
migrate`` (storage/copy.py) SQLite -> PostgreSQL -> SQLite, every table verified; the copies answer alike
(sources, their Markdown, the text around a hit)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import StoreSettings, load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.copy import copy_store
from memstrata.storage.factory import open_store

DOC = "# 差旅\n\n## 火车\n\n四小时以上的火车可以订一等座。\n\n## Hotels\n\nHotels up to 900 CNY a night are approved.\n"


def _memory(location: str, embedder: UniversalSentenceEncoder) -> Memory:
    return Memory(open_store(StoreSettings(path=location)), embedder,
                  settings=load_settings({"store": {"path": location}}))  # fmt: skip


def _answers(memory: Memory) -> tuple[Any, ...]:
    sources = memory.knowledge.sources("travel", user_id="u1")
    record = memory.knowledge.source("travel", sources[0].source, user_id="u1")
    hit = memory.search("火车一等座", user_id="u1", filters={"kind": "knowledge"}, limit=1)[0]
    return sources, record, memory.knowledge.around(hit.id, chars=30, user_id="u1")


@pytest.fixture
def ingested(tmp_path: Path, embedder: UniversalSentenceEncoder) -> str:
    (tmp_path / "travel.md").write_text(DOC, encoding="utf-8")
    location = str(tmp_path / "source.db")
    with _memory(location, embedder) as memory:
        assert memory.ingest(tmp_path / "travel.md", collection="travel", user_id="u1").count("added") == 1
    return location


def test_sources_survive_export_and_import(ingested: str, tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    exported = tmp_path / "export.jsonl"
    with _memory(ingested, embedder) as memory:
        memory.export_jsonl(exported)
        expected = _answers(memory)
    with _memory(str(tmp_path / "imported.db"), embedder) as fresh:
        fresh.import_jsonl(exported)
        assert _answers(fresh) == expected
        fresh.import_jsonl(exported)  # twice: a merge, not a conflict
        assert len(fresh.knowledge.sources("travel", user_id="u1")) == 1


def test_sources_survive_a_copy_between_backends(
    ingested: str, tmp_path: Path, embedder: UniversalSentenceEncoder, postgres_databases: Any,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    pg_url: str = postgres_databases.create(request.node.nodeid)
    back = str(tmp_path / "back.db")
    there = copy_store(ingested, pg_url, chunk_size=5)
    assert there.verified and {t.table: t for t in there.tables}["knowledge_sources"].copied == 1
    assert copy_store(pg_url, back, chunk_size=5).verified
    with _memory(ingested, embedder) as memory:
        expected = _answers(memory)
    for location in (pg_url, back):
        with _memory(location, embedder) as copy:
            assert _answers(copy) == expected
