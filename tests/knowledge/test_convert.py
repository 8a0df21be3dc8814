"""Conversion: every supported format, in Chinese and English, through the real MarkItDown in the
sandbox process. The planted sentence must come through verbatim, the Markdown must be the same bytes
on every conversion, and pages (PDF) and slides (PowerPoint) must become page numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.chunk_docs import Document, Section, write

from knowledge.corpus import Planted
from memstrata.knowledge.convert import ConvertedDocument, file_hash, format_of, normalise
from memstrata.knowledge.limits import IngestLimits
from memstrata.knowledge.media import MediaModels
from memstrata.knowledge.pipeline import convert_source
from memstrata.knowledge.sandbox import ConversionSandbox


def _convert(path: Path, sandbox: ConversionSandbox) -> ConvertedDocument:
    fmt = format_of(path)
    assert fmt is not None
    return convert_source(
        path, fmt, source=path.as_posix(), digest=file_hash(path), limits=IngestLimits(), sandbox=sandbox,
        media=MediaModels(),
    )  # fmt: skip


def test_every_format_keeps_the_planted_sentence_verbatim_and_stable(
    planted_corpus: dict[Path, Planted], sandbox: ConversionSandbox
) -> None:
    for path, planted in planted_corpus.items():
        first = _convert(path, sandbox)
        second = _convert(path, sandbox)
        assert planted.sentence in first.markdown, (path.name, first.markdown)
        assert planted.heading in first.markdown
        assert first.markdown.encode() == second.markdown.encode(), path.name  # byte-identical Markdown
        assert first.markdown_hash == second.markdown_hash
        assert first.format == planted.fmt
        assert "\f" not in first.markdown and "\r" not in first.markdown
        assert first.title  # from the document or its first line


def test_pdf_pages_and_pptx_slides_become_page_numbers(
    planted_corpus: dict[Path, Planted], sandbox: ConversionSandbox
) -> None:
    for path, planted in planted_corpus.items():
        if planted.fmt not in ("pdf", "pptx"):
            continue
        doc = _convert(path, sandbox)
        at = doc.markdown.index(planted.sentence)
        # PDF: one section per page, the fact on page 2. PowerPoint: a title slide, then one slide per section.
        assert doc.page_at(at) == (2 if planted.fmt == "pdf" else 3), path.name
        assert doc.pages == (3 if planted.fmt == "pdf" else 4)


@pytest.mark.parametrize("fmt", ["md", "txt", "csv", "json"])
def test_text_formats_convert_too(fmt: str, tmp_path: Path, sandbox: ConversionSandbox) -> None:
    doc = Document("笔记", (Section("要点", ("会议改到周四下午三点。", "Bring the Q3 numbers.")),), lang="zh")
    converted = _convert(write(doc, tmp_path, "notes", fmt), sandbox)
    assert "会议改到周四下午三点。" in converted.markdown
    assert "Bring the Q3 numbers." in converted.markdown
    assert converted.page_at(0) is None


@pytest.mark.parametrize(
    ("text", "charset"),
    [
        ("Café crème brûlée à la française. Naïve résumé of the été season in Zürich.", "latin-1"),
        ("会议改到周四下午三点，请带上第三季度的数字。我们在北京总部的三楼会议室见面。", "gb18030"),
        ("會議改到週四下午三點，請帶上第三季度的數字。我們在台北總部的三樓會議室見面。", "big5"),
        ("這是 Big5 編碼的檔案，說明監控系統 Prometheus 的設定方式。", "big5"),  # read as Shift-JIS: ｳoｬO
        ("短文件", "gbk"),  # read as Big5: 傻恅璃
        ("這是 Big5 編碼的檔案", "big5"),  # read as UTF-16 (no NUL byte in it), then as Shift-JIS
        ("회의는 목요일입니다", "euc_kr"),
    ],
)
def test_a_text_file_in_a_legacy_charset_is_read_as_written(
    text: str, charset: str, tmp_path: Path, sandbox: ConversionSandbox
) -> None:
    """Short files read equally well in several code pages to the detector: Latin-1 came out as cp1250 ('crčme'),
    GBK as Big5 and Big5 as Shift-JIS."""
    path = tmp_path / "notes.txt"
    path.write_bytes(f"{text}\n".encode(charset))
    assert text in _convert(path, sandbox).markdown


def test_a_utf8_byte_order_mark_is_not_text(tmp_path: Path, sandbox: ConversionSandbox) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes("\ufeffMeeting notes\n\nThe launch moved to May.\n".encode())
    converted = _convert(path, sandbox)
    assert "\ufeff" not in converted.markdown and converted.title == "Meeting notes"


def test_normalise_is_stable_and_keeps_text() -> None:
    raw = "Title\r\n\r\n\r\n\r\nLine one   \r\n第二行\u3000\x00\x07\fPage two\f"
    markdown, pages = normalise(raw, "pdf")
    assert markdown == "Title\n\nLine one\n第二行\n\nPage two"
    assert pages == (0, markdown.index("Page two"))
    assert normalise(raw, "pdf") == (markdown, pages)
    slides, starts = normalise("intro\n<!-- Slide number: 1 -->\n# A\ntext\n\n<!-- Slide number: 2 -->\n# B\n", "pptx")
    assert slides == "intro\n# A\ntext\n\n# B"  # text before the first marker is kept
    assert starts == (0, slides.index("# B"))


def test_a_long_html_page_comes_back_from_the_sandbox(tmp_path: Path, sandbox: ConversionSandbox) -> None:
    # Regression: the page title used to travel back as a BeautifulSoup string with the whole parse tree,
    # which failed to pickle (RecursionError) on long pages.
    sections = tuple(Section(f"Part {n}", (f"Paragraph {n} of a long page.",) * 8) for n in range(40))
    doc = Document("A long page", (*sections, Section("End", ("The archive key is 5531.",))))
    converted = _convert(write(doc, tmp_path, "long", "html"), sandbox)
    assert "The archive key is 5531." in converted.markdown and converted.title == "A long page"
