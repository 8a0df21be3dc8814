"""Malformed and hostile files in one batch with good ones: each bad file gets a clear error naming it,
the good ones are ingested, and nothing of a bad file becomes searchable."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

import pytest

from knowledge.corpus import Planted, write_planted
from memstrata import Memory
from memstrata.knowledge import IngestLimits, IngestOptions, Ingestor
from memstrata.knowledge.limits import MB, SourceRejected
from memstrata.knowledge.sandbox import ConversionSandbox
from memstrata.types import Scope

GOOD = [
    Planted("docx", "en", "Warehouse", "The Denver warehouse door code is 4417.", "door code"),
    Planted("pdf", "zh", "财务制度", "报销单据必须在每月十五日之前提交给财务部。", "报销"),
]


def _zip_bomb(path: Path, unpacked_mb: int) -> Path:
    """A docx-shaped zip whose document part is megabytes of zeros compressed about 1000:1."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with archive.open("word/document.xml", "w") as member:
            block = b"\0" * MB
            for _ in range(unpacked_mb):
                member.write(block)
    return path


def _hostile_files(directory: Path) -> dict[str, str]:
    """File name -> a phrase its error must contain."""
    good_pdf = write_planted(directory, GOOD[1])
    data = good_pdf.read_bytes()
    (directory / "truncated.pdf").write_bytes(data[: len(data) // 3])
    _zip_bomb(directory / "bomb.docx", unpacked_mb=64)
    with (directory / "huge.pdf").open("wb") as handle:
        handle.truncate(200 * MB)  # sparse: 200 MB on paper, nothing on disk
    (directory / "random.docx").write_bytes(bytes(range(256)) * 64)
    (directory / "page.pdf").write_text("<html><body>not a pdf</body></html>", encoding="utf-8")
    (directory / "empty.txt").write_bytes(b"")
    (directory / "junk.md").write_bytes(random.Random(7).randbytes(4096))  # was ingested as searchable mojibake
    (directory / "junk.html").write_bytes(random.Random(8).randbytes(20_000))  # the same, through the HTML parser
    return {
        "truncated.pdf": "truncated",  # a note or an error, never a crash
        "bomb.docx": "decompression bomb",
        "huge.pdf": "200.0 MB, over the 50 MB limit",
        "random.docx": "not a readable docx",
        "page.pdf": "not a PDF",
        "empty.txt": "is empty",
        "junk.md": "holds binary data, not text",
        "junk.html": "holds binary data, not text",
    }


def test_bad_files_fail_one_by_one_and_good_files_still_land(memory: Memory, tmp_path: Path) -> None:
    directory = tmp_path / "mixed"
    directory.mkdir()
    expected = _hostile_files(directory)
    write_planted(directory, GOOD[0])
    scope = Scope(user_id="u1")

    report = Ingestor(memory.store, memory.embedder, scope, IngestOptions(collection="mixed")).run([directory])

    by_name = {Path(outcome.source).name: outcome for outcome in report.outcomes}
    for name, phrase in expected.items():
        outcome = by_name[name]
        message = " ".join([outcome.error or "", *outcome.notes])
        assert phrase in message, (name, outcome)
        if name == "empty.txt":  # nothing to ingest is not a failure: a rerun of the folder must not exit 1
            assert outcome.status == "skipped", outcome
        elif name != "truncated.pdf":
            assert outcome.status == "failed" and name in (outcome.error or ""), outcome
    assert by_name["en-docx.docx"].status == "added" and by_name["zh-pdf.pdf"].status == "added"

    stored = memory.get_all(user_id="u1", filters={"kind": "knowledge"}, limit=1000)
    sources = {Path(item.metadata["source"]).name for item in stored}
    assert sources <= {"en-docx.docx", "zh-pdf.pdf", "truncated.pdf"}
    assert {"bomb.docx", "huge.pdf", "random.docx", "page.pdf", "junk.md", "junk.html"}.isdisjoint(sources)
    hits = memory.search("What is the warehouse door code?", user_id="u1", filters={"kind": "knowledge"}, limit=1)
    assert hits and GOOD[0].sentence in hits[0].text


def test_a_conversion_past_its_time_limit_is_stopped_and_the_sandbox_recovers(tmp_path: Path) -> None:
    pdf = write_planted(tmp_path, GOOD[1])
    with ConversionSandbox(IngestLimits(timeout_s=0.01)) as sandbox:
        with pytest.raises(SourceRejected, match=r"took longer than 0\.01 s"):
            sandbox.convert(pdf, "pdf")
        sandbox.limits = IngestLimits()
        markdown, _ = sandbox.convert(pdf, "pdf")
    assert GOOD[1].sentence in markdown


def test_unpacked_size_limit(tmp_path: Path) -> None:
    docx = write_planted(tmp_path, GOOD[0])
    from memstrata.knowledge.limits import precheck

    with pytest.raises(SourceRejected, match="would unpack to"):
        precheck(docx, "docx", IngestLimits(max_unpacked_mb=0.001))
