"""The whole path on both backends: a directory of real zh/en documents of every format is ingested
into a collection; each planted question finds its chunk, with provenance that points back to the
source, the page or slide, the heading and the exact span of the source Markdown. Knowledge is
searchable alone, or together with conversation memory."""

from __future__ import annotations

from pathlib import Path

from knowledge.corpus import Planted
from memstrata import Memory
from memstrata.knowledge import ChunkSize, IngestOptions, Ingestor
from memstrata.knowledge.convert import file_hash
from memstrata.knowledge.limits import IngestLimits
from memstrata.knowledge.media import MediaModels
from memstrata.knowledge.pipeline import convert_source
from memstrata.knowledge.sandbox import ConversionSandbox
from memstrata.types import Scope


def test_each_question_finds_its_chunk_with_provenance(
    memory: Memory, planted_corpus: dict[Path, Planted], sandbox: ConversionSandbox
) -> None:
    directory = next(iter(planted_corpus)).parent
    # Small chunks, so the three sections of each document land in different chunks and provenance matters.
    options = IngestOptions(collection="handbook", size=ChunkSize(size=48, overlap=8))
    report = Ingestor(memory.store, memory.embedder, Scope(user_id="ana"), options).run([directory])
    assert report.count("added") == len(planted_corpus) and not report.failed
    assert report.pages >= len(planted_corpus) and report.chunks >= 3 * len(planted_corpus)

    for path, planted in planted_corpus.items():
        hits = memory.search(planted.question, user_id="ana", filters={"kind": "knowledge"}, limit=3)
        top = hits[0].memory
        assert planted.sentence in top.text, (planted.question, [hit.text for hit in hits])
        assert top.kind == "knowledge" and top.metadata["collection"] == "handbook"
        assert top.metadata["source"] == path.as_posix() and top.provenance.document == path.as_posix()
        assert top.provenance.source == "document"
        assert top.metadata["source_hash"] == file_hash(path)
        # Where it is: headings for formats that have them, the sheet for xlsx, the page for PDF (text only).
        expected_location = {
            "docx": ("heading_path", planted.heading), "html": ("heading_path", planted.heading),
            "pptx": ("page", 3), "xlsx": ("heading_path", ["S2"]), "pdf": ("page", 2),
        }[planted.fmt]  # fmt: skip
        key, value = expected_location
        assert value in top.metadata[key] if isinstance(value, str) else top.metadata[key] == value, (planted, top)
        if planted.fmt == "pptx":
            assert planted.heading in top.metadata["heading_path"]
        # The span points into the stable Markdown of the source: converting again gives the same text there.
        doc = convert_source(
            path, planted.fmt, source=path.as_posix(), digest=file_hash(path), limits=IngestLimits(),
            sandbox=sandbox, media=MediaModels(),
        )  # fmt: skip
        assert top.provenance.span is not None
        start, end = top.provenance.span
        assert doc.markdown[start:end] == top.text
        assert top.metadata["markdown_hash"] == doc.markdown_hash


def test_knowledge_is_searchable_alone_or_with_conversation(
    memory: Memory, planted_corpus: dict[Path, Planted]
) -> None:
    path, planted = next((p, x) for p, x in planted_corpus.items() if x.lang == "en" and x.fmt == "docx")
    Ingestor(memory.store, memory.embedder, Scope(user_id="bo"), IngestOptions(collection="ops")).run([path])
    memory.add("I told the team the Denver warehouse door code changes next month.", user_id="bo")

    together = memory.search("Denver warehouse door code", user_id="bo", limit=5)
    assert {hit.memory.kind for hit in together} >= {"knowledge", "fact"}
    alone = memory.search("Denver warehouse door code", user_id="bo", filters={"metadata": {"collection": "ops"}})
    assert alone and all(hit.memory.kind == "knowledge" for hit in alone)
    without = memory.search("Denver warehouse door code", user_id="bo", filters={"exclude_kind": ["knowledge"]})
    assert without and all(hit.memory.kind != "knowledge" for hit in without)
    assert memory.search(planted.question, user_id="someone-else", limit=5) == []  # scope is enforced
