"""Any supported file to one stable Markdown text, with page starts, through Microsoft's MarkItDown.

The Markdown is the document of record: chunk spans, heading paths and pages all point into it,
so it must be the same bytes every time the same file is converted. MarkItDown's output is
normalised here (line endings, trailing spaces, runs of blank lines, control characters) and page
markers are turned into offsets: PDF pages (form feeds from pdfminer) and PowerPoint slides
(``<!-- Slide number: N -->``). Text is never translated or reworded.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from memstrata.errors import InvalidInputError
from memstrata.han import HAN_CHAR
from memstrata.patterns import lazy_pattern

# Extension -> format name. Formats MarkItDown converts with the [docx,pdf,pptx,xlsx] extras installed.
DOCUMENT_FORMATS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".html": "html",
    ".htm": "html",
    ".csv": "csv",
    ".json": "json",
    ".md": "md",
    ".markdown": "md",
    ".txt": "txt",
}
IMAGE_FORMATS: dict[str, str] = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif", ".webp": "webp"}
AUDIO_FORMATS: dict[str, str] = {".mp3": "mp3", ".wav": "wav", ".m4a": "m4a", ".ogg": "ogg", ".flac": "flac"}

_SLIDE = lazy_pattern(r"^<!-- Slide number: (\d+) -->\n?", re.MULTILINE)
_CONTROL = lazy_pattern(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_BLANK_RUNS = lazy_pattern(r"\n{3,}")
_TRAILING = lazy_pattern(r"[ \t\u3000]+$", re.MULTILINE)


def format_of(path: Path) -> str | None:
    """The format name of a path by extension, or None when it is not ingestible."""
    suffix = path.suffix.lower()
    return DOCUMENT_FORMATS.get(suffix) or IMAGE_FORMATS.get(suffix) or AUDIO_FORMATS.get(suffix)


def file_hash(path: Path, *, block: int = 1 << 20) -> str:
    """sha256 of the file's bytes, read in blocks (a large file is never held in memory for this)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(block):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class ConvertedDocument:
    """One source as Markdown. ``page_starts[i]`` is the offset where page (or slide) i+1 begins."""

    source: str  # the path or URL as recorded in provenance
    format: str
    source_hash: str  # sha256 of the source bytes: what re-ingestion compares
    markdown: str
    title: str
    page_starts: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def markdown_hash(self) -> str:
        return hashlib.sha256(self.markdown.encode("utf-8")).hexdigest()

    @property
    def pages(self) -> int:
        return max(1, len(self.page_starts))

    def page_at(self, offset: int) -> int | None:
        """1-based page or slide holding ``offset``; None for formats without pages."""
        if not self.page_starts:
            return None
        return max(1, bisect.bisect_right(self.page_starts, offset))


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    text = _TRAILING.sub("", text)
    return _BLANK_RUNS.sub("\n\n", text)


def normalise(raw: str, fmt: str) -> tuple[str, tuple[int, ...]]:
    """Stable Markdown and page starts from MarkItDown's raw output (a UTF-8 file's byte-order mark dropped: it
    stayed in the first chunk and the title)."""
    raw = raw.removeprefix("\ufeff")
    if fmt == "pdf" and "\f" in raw:
        pages = [_clean(page).strip() for page in raw.split("\f")]
        while pages and not pages[-1]:
            pages.pop()  # pdfminer ends the last page with a form feed too
        return _join_pages(pages)
    if fmt == "pptx" and _SLIDE.search(raw):
        parts = _SLIDE.split(raw)
        slides = parts[2::2]
        slides[0] = parts[0] + slides[0]  # text before the first marker is not dropped
        return _join_pages([_clean(slide).strip() for slide in slides])
    return _clean(raw).strip(), ()


def _join_pages(pages: list[str]) -> tuple[str, tuple[int, ...]]:
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for page in pages:
        starts.append(offset)
        parts.append(page)
        offset += len(page) + 2  # the "\n\n" that joins pages
    return "\n\n".join(parts), tuple(starts)


_FRONTMATTER = lazy_pattern(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)


def title_of(markdown: str, fallback: str) -> str:
    """The frontmatter's title, else the first line of text (a file with frontmatter was titled '---')."""
    match = _FRONTMATTER.match(markdown)
    if match:
        try:
            front = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            front = None
        title = front.get("title") if isinstance(front, dict) else None
        if isinstance(title, str) and title.strip():
            return title.strip()[:200]
        markdown = markdown[match.end() :]
    for line in markdown.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if re.search(r"[^\W_]", stripped):  # text, not a rule or a bare marker ("---", "***")
            return stripped[:200]
    return fallback


def markitdown_convert(path: Path, fmt: str) -> tuple[str, str | None]:
    """Raw Markdown and title of one document file. Runs inside the conversion sandbox.

    The converter for the file's own format is called directly. ``MarkItDown.convert`` would, when the
    PDF parser fails, fall through to other converters guessed from the bytes, and ingest a broken
    PDF as plain text ("%PDF-1.4 ..."); a broken file must be an error instead.
    """
    try:
        from markitdown import StreamInfo, converters
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise InvalidInputError("document ingestion needs the ingest extra: pip install 'memstrata[ingest]'") from exc
    by_format: dict[str, Any] = {
        "pdf": converters.PdfConverter,
        "docx": converters.DocxConverter,
        "pptx": converters.PptxConverter,
        "xlsx": converters.XlsxConverter,
        "html": converters.HtmlConverter,
        "csv": converters.CsvConverter,
    }
    converter = by_format.get(fmt, converters.PlainTextConverter)()  # md, txt, json: the text as it is
    extension = next(ext for ext, name in DOCUMENT_FORMATS.items() if name == fmt)
    data = path.read_bytes()
    info = StreamInfo(extension=extension, filename=path.name, charset=_charset(data))
    result = converter.convert(io.BytesIO(data), info)
    # The HTML title is a BeautifulSoup string that drags the whole parse tree along when pickled back to
    # the parent (a RecursionError on a long page): hand back plain text.
    return str(result.markdown), None if result.title is None else str(result.title)


def _charset(data: bytes) -> str | None:
    """UTF-8 when the bytes are valid UTF-8 (statistical detection misreads short Chinese text); else the
    detector's best reading (GB18030, Big5 ...). Short Western text reads equally well as several 8-bit code
    pages (café is fine in cp1250 too, crème is not): among the equally good readings the commonest wins."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    from charset_normalizer import from_bytes  # markitdown's own detector

    # UTF-16 / UTF-32 text holds NUL bytes; without any, such a reading is noise (it came first for short Big5)
    readings = [r for r in from_bytes(data) if b"\0" in data or not r.encoding.startswith(("utf_16", "utf_32"))]
    if not readings:
        return None
    words, chinese = max(((_chinese_words(str(r)), r) for r in readings), key=lambda scored: scored[0])
    if words >= 0.1:
        return str(chinese.encoding)
    # traditional text spells no simplified words: the detector's first reading of known characters
    known = next((r for r in readings if _known_characters(str(r)) >= 0.7), None)
    if known is not None:
        return str(known.encoding)
    best = readings[0]
    tied = {r.encoding for r in readings if (r.chaos, r.coherence) == (best.chaos, best.coherence)}
    return next((name for name in _COMMON_8BIT if name in tied), best.encoding)


_COMMON_8BIT = ("cp1252", "latin_1", "iso8859_15")  # Western European first: by far the most files


def _chinese_words(text: str) -> float:
    """Share of the Chinese characters that sit in words of jieba's dictionary. GBK and Big5 bytes read validly
    in each other's code page (and in Japanese and Korean ones), and the detector cannot tell a short file's
    readings apart ('短文件' read as Big5 is '傻恅璃'); the reading that spells real words is the right one."""
    import rjieba

    sample = text[:4000]
    han = len(HAN_CHAR.findall(sample))
    if not han:
        return 0.0
    words = rjieba.cut(sample, hmm=False)  # dictionary words only: the HMM would join any characters
    return sum(len(word) for word in words if len(word) > 1 and all(HAN_CHAR.match(c) for c in word)) / han


_KANA_HANGUL = lazy_pattern(r"[\u3040-\u30ff\uac00-\ud7a3]")


def _known_characters(text: str) -> float:
    """Share of the characters beyond ASCII that are Chinese characters jieba's dictionary knows, Japanese
    kana or Korean syllables. jieba's words are simplified Chinese, so a short traditional (Big5) file spells
    none of them, but its characters are known ones; mojibake is half-width katakana, symbols or characters
    jieba never saw."""
    import jieba

    jieba.setLogLevel(logging.ERROR)
    jieba.dt.check_initialized()
    wide = [c for c in text[:4000] if ord(c) > 127 and not c.isspace()]
    if not wide:
        return 0.0
    frequency = jieba.dt.FREQ
    return sum(1 for c in wide if _KANA_HANGUL.match(c) or (HAN_CHAR.match(c) and frequency.get(c, 0) > 0)) / len(wide)
