"""The knowledge sources table on every backend: one live version per source, retire-and-replace in one
batch, exact scope, GROUP BY collection counts, erasure, export and merge."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata.errors import ConflictError
from memstrata.storage.knowledge_protocol import SourceRecord, SourceStatus
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import Scope, new_id

T0 = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)
ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")
MARKDOWN = "# 员工手册\n\n年假为每年十五天。\n\n## Travel\n\nTrains over 4 hours may be booked in first class.\n"


def record(source: str, scope: Scope = ALICE, collection: str = "handbook", **fields: object) -> SourceRecord:
    values: dict[str, object] = {
        "id": new_id(), "scope": scope, "collection": collection, "source": source, "source_hash": f"h-{source}",
        "markdown": MARKDOWN, "markdown_hash": "m1", "format": "md", "title": "员工手册", "pages": 2,
        "page_starts": (0, 30), "chunker": "structure", "chunk_size": 256, "overlap": 32, "chunks": 3,
        "tokens": 40, "notes": ("converted",), "created_at": T0, "updated_at": T0, **fields,
    }  # fmt: skip
    return SourceRecord.model_validate(values)


def test_sources_round_trip_with_their_markdown_and_exact_scope(store: Store) -> None:
    first = record("/docs/a.md", metadata={"url": None})
    store.write(WriteBatch(sources=[first, record("/docs/b.pdf", format="pdf"), record("/other/c.md"),
                                    record("/docs/a.md", scope=BOB)]))  # fmt: skip
    assert store.knowledge.source(ALICE, "handbook", "/docs/a.md") == first
    listed = store.knowledge.sources(ALICE, "handbook")
    assert [s.source for s in listed] == ["/docs/a.md", "/docs/b.pdf", "/other/c.md"]
    under = store.knowledge.sources(ALICE, "handbook", prefix="/docs/")
    assert [s.source for s in under] == ["/docs/a.md", "/docs/b.pdf"]
    assert [s.source for s in store.knowledge.sources(BOB)] == ["/docs/a.md"]
    # Exact scope: a session of alice sees none of alice's user-level sources, and no other tenant does.
    assert store.knowledge.sources(Scope(user_id="alice", session_id="s1")) == []
    assert store.knowledge.sources(Scope(tenant_id="acme", user_id="alice")) == []
    assert store.knowledge.source(BOB, "handbook", "/docs/b.pdf") is None


def test_a_new_version_retires_the_old_one_in_the_same_batch(store: Store) -> None:
    old = record("/docs/a.md")
    store.write(WriteBatch(sources=[old]))
    later = T0 + timedelta(hours=1)
    new = record("/docs/a.md", source_hash="h2", version=2, created_at=later, updated_at=later)
    retired = old.model_copy(update={"status": SourceStatus.RETIRED, "retired_at": later, "updated_at": later})
    store.write(WriteBatch(sources=[new, retired]))  # the retirement is applied first whatever the order
    live = store.knowledge.source(ALICE, "handbook", "/docs/a.md")
    assert live is not None and live.id == new.id and live.source_hash == "h2"
    versions = store.knowledge.source_versions(ALICE, "handbook", "/docs/a.md")
    assert [(v.version, v.status) for v in versions] == [(1, SourceStatus.RETIRED), (2, SourceStatus.ACTIVE)]
    assert versions[0].retired_at == later


def test_two_live_versions_of_one_source_are_refused_and_nothing_is_written(store: Store) -> None:
    store.write(WriteBatch(sources=[record("/docs/a.md")]))
    with pytest.raises(ConflictError):
        store.write(WriteBatch(sources=[record("/docs/b.md"), record("/docs/a.md")]))
    assert [s.source for s in store.knowledge.sources(ALICE)] == ["/docs/a.md"]


def test_collection_counts_come_from_one_group_by(store: Store) -> None:
    store.write(WriteBatch(sources=[record("a.md"), record("b.pdf", format="pdf", chunks=5, pages=10),
                                    record("c.md", collection="notes"), record("d.md", scope=BOB)]))  # fmt: skip
    counts = {c.name: c for c in store.knowledge.collections(ALICE)}
    assert set(counts) == {"handbook", "notes"}
    assert (counts["handbook"].sources, counts["handbook"].chunks, counts["handbook"].pages) == (2, 8, 12)
    assert counts["handbook"].formats == {"md": 1, "pdf": 1}
    assert counts["handbook"].tokens == 80


def test_erase_scope_removes_sources_and_counts_prove_it(store: Store) -> None:
    store.write(WriteBatch(sources=[record("a.md"), record("b.md", scope=BOB)]))
    assert store.count_scope_rows(ALICE)["knowledge_sources"] == 1
    deleted = store.erase_scope(ALICE)
    assert deleted["knowledge_sources"] == 1
    assert store.count_scope_rows(ALICE)["knowledge_sources"] == 0
    assert [s.source for s in store.knowledge.sources(BOB)] == ["b.md"]


def test_sources_are_exported_and_merge_back_without_conflict(store: Store) -> None:
    kept = record("a.md")
    store.write(WriteBatch(sources=[kept]))
    exported = [found for kind, found in store.export_all() if kind == "knowledge_source"]
    assert exported == [kept]
    store.write(WriteBatch(sources=exported, skip_identical=True))  # importing into its own store merges
    assert len(store.knowledge.sources(ALICE)) == 1
