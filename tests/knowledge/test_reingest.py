"""Re-ingestion: the pure planner, then the real thing on both backends. An unchanged folder costs no
conversion and no embedding; a changed file replaces only its own chunks (the old ones are superseded,
history kept); a removed file is retired; a file that now fails keeps its previous version."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from knowledge.corpus import Planted, document_for, write_planted
from memstrata import Memory
from memstrata.knowledge import IngestOptions, Ingestor, plan
from memstrata.providers.protocol import Vectors
from memstrata.types import MemoryStatus, Scope

SCOPE = Scope(user_id="re")


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.texts = 0

    @property
    def model_id(self) -> str:
        return self.inner.model_id  # type: ignore[attr-defined,no-any-return]

    @property
    def dims(self) -> int:
        return self.inner.dims  # type: ignore[attr-defined,no-any-return]

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return self.inner.embed_batch(texts)  # type: ignore[attr-defined,no-any-return]


def test_plan_is_a_pure_comparison_of_hashes() -> None:
    disk = {"a": "1", "b": "2", "c": "3"}
    indexed = {"a": "1", "b": "x", "d": "4"}
    result = plan(disk, indexed)
    assert (result.add, result.replace, result.unchanged, result.retire) == (("c",), ("b",), ("a",), ("d",))
    assert result.work == ("c", "b")
    assert plan(disk, disk).is_empty() and plan(disk, disk).unchanged == ("a", "b", "c")
    assert plan({}, indexed, retire_missing=False).retire == ()
    assert plan(disk, {"a": ""}).replace == ("a",)  # an inconsistent earlier write is redone


def _live(memory: Memory) -> dict[str, list[str]]:
    """source file name -> ids of its live chunks."""
    result: dict[str, list[str]] = {}
    for item in memory.get_all(user_id="re", filters={"kind": "knowledge"}, limit=1000):
        result.setdefault(Path(item.metadata["source"]).name, []).append(item.id)
    return result


def test_reingest_does_only_the_work_that_changed(memory: Memory, corpus_dir: Path) -> None:
    counting = CountingEmbedder(memory.embedder)

    def run() -> dict[str, int]:
        report = Ingestor(memory.store, counting, SCOPE, IngestOptions(collection="docs")).run([corpus_dir])
        assert not report.failed, report.failed
        return {status: report.count(status) for status in ("added", "replaced", "unchanged", "retired")}

    assert run()["added"] == 10
    first = _live(memory)
    counting.texts = 0

    assert run() == {"added": 0, "replaced": 0, "unchanged": 10, "retired": 0}
    assert counting.texts == 0  # no embedding work at all
    assert _live(memory) == first

    changed = Planted("docx", "en", "Warehouse", "The Denver warehouse door code is now 8812.", "door code")
    write_planted(corpus_dir, changed)  # same file name, new content
    (corpus_dir / "zh-html.html").unlink()
    assert run() == {"added": 0, "replaced": 1, "unchanged": 8, "retired": 1}
    after = _live(memory)
    assert set(after) == set(first) - {"zh-html.html"}
    for name in after:
        if name != "en-docx.docx":
            assert after[name] == first[name]  # untouched files keep their very chunks
    assert set(after["en-docx.docx"]).isdisjoint(first["en-docx.docx"])
    assert 0 < counting.texts <= len(after["en-docx.docx"])  # only the changed file was embedded

    hits = memory.search("Denver warehouse door code", user_id="re", filters={"kind": "knowledge"}, limit=1)
    assert "8812" in hits[0].text
    old = memory.get(first["en-docx.docx"][0], user_id="re")
    assert old.status == MemoryStatus.SUPERSEDED and old.recorded_to is not None
    history = memory.history(old.id, user_id="re")
    assert [event.action.value for event in history] == ["ADD", "DELETE"]
    assert "re-ingested en-docx.docx" in (history[-1].reason or "")
    retired = memory.get(first["zh-html.html"][0], user_id="re")
    assert retired.status == MemoryStatus.DELETED
    assert "source removed" in (memory.history(retired.id, user_id="re")[-1].reason or "")


def test_a_file_that_now_fails_keeps_its_previous_version(memory: Memory, corpus_dir: Path) -> None:
    options = IngestOptions(collection="docs")
    Ingestor(memory.store, memory.embedder, SCOPE, options).run([corpus_dir])
    before = _live(memory)["en-pdf.pdf"]
    (corpus_dir / "en-pdf.pdf").write_bytes(b"%PDF-1.4 garbage that no parser can read")
    report = Ingestor(memory.store, memory.embedder, SCOPE, options).run([corpus_dir])
    assert [Path(o.source).name for o in report.failed] == ["en-pdf.pdf"]
    assert _live(memory)["en-pdf.pdf"] == before


def test_a_file_emptied_on_disk_leaves_search_on_the_next_ingest(memory: Memory, corpus_dir: Path) -> None:
    """A user trial: a source emptied on disk was "skipped: notes.txt is empty", and its old chunks went on answering
    (a deleted file's were retired)."""
    options = IngestOptions(collection="docs")
    Ingestor(memory.store, memory.embedder, SCOPE, options).run([corpus_dir])
    emptied = sorted(_live(memory))[0]
    (corpus_dir / emptied).write_bytes(b"")
    report = Ingestor(memory.store, memory.embedder, SCOPE, options).run([corpus_dir])
    assert [Path(o.source).name for o in report.outcomes if o.status == "retired"] == [emptied]
    assert emptied not in _live(memory) and len(_live(memory)) == 9


def test_ingesting_one_file_never_retires_the_rest(memory: Memory, corpus_dir: Path) -> None:
    options = IngestOptions(collection="docs")
    Ingestor(memory.store, memory.embedder, SCOPE, options).run([corpus_dir])
    single = corpus_dir / "zh-docx.docx"
    document_for(Planted("docx", "zh", "仓库管理", "杭州仓库的门禁密码改为五五二零。", "密码"))
    report = Ingestor(memory.store, memory.embedder, SCOPE, options).run([single])
    assert report.count("retired") == 0 and report.count("unchanged") == 1
    assert len(_live(memory)) == 10
