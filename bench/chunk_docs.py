"""Real office documents generated in code, for the ingestion tests and the chunker benchmark.

One small document model (a title and sections of paragraphs, in Chinese or English) is written as
docx (python-docx), pptx (python-pptx), xlsx (openpyxl), pdf (reportlab; Chinese through the
Adobe-GB1 CID font STSong-Light, which every PDF reader knows, so no font file is needed), html,
Markdown, plain text, csv and json. Nothing here is converted or read back: that is the job of
the code under test. The libraries are test/bench dependencies, not runtime ones.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Section:
    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Document:
    title: str
    sections: tuple[Section, ...]
    lang: str = "en"  # "zh" or "en": picks the PDF font
    meta: dict[str, str] = field(default_factory=dict)

    def sentences(self) -> list[str]:
        return [p for s in self.sections for p in s.paragraphs]


def write_docx(doc: Document, path: Path) -> Path:
    from docx import Document as Docx

    out = Docx()
    out.add_heading(doc.title, level=0)
    for section in doc.sections:
        out.add_heading(section.heading, level=1)
        for paragraph in section.paragraphs:
            out.add_paragraph(paragraph)
    out.save(str(path))
    return path


def write_pptx(doc: Document, path: Path) -> Path:
    from pptx import Presentation

    deck = Presentation()
    title_slide = deck.slides.add_slide(deck.slide_layouts[0])
    title_slide.shapes.title.text = doc.title
    for section in doc.sections:
        slide = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
        slide.shapes.title.text = section.heading
        body = slide.placeholders[1].text_frame
        body.text = section.paragraphs[0]
        for paragraph in section.paragraphs[1:]:
            body.add_paragraph().text = paragraph
    deck.save(str(path))
    return path


def write_xlsx(doc: Document, path: Path) -> Path:
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for number, section in enumerate(doc.sections, 1):
        sheet = book.create_sheet(title=f"S{number}")  # sheet names: 31 characters, no []:*?/\
        sheet.append(["主题" if doc.lang == "zh" else "Topic", "内容" if doc.lang == "zh" else "Content"])
        for paragraph in section.paragraphs:
            sheet.append([section.heading, paragraph])
    book.save(str(path))
    return path


def write_pdf(doc: Document, path: Path) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    font = "Helvetica"
    if doc.lang == "zh":
        font = "STSong-Light"
        pdfmetrics.registerFont(UnicodeCIDFont(font))
    wrap = "CJK" if doc.lang == "zh" else None
    body = ParagraphStyle("body", fontName=font, fontSize=11, leading=16, wordWrap=wrap)
    heading = ParagraphStyle("heading", fontName=font, fontSize=15, leading=22, spaceAfter=8, wordWrap=wrap)
    story: list[object] = [Paragraph(html.escape(doc.title), heading)]
    for index, section in enumerate(doc.sections):
        if index:
            story.append(PageBreak())  # one section per page: page numbers become provenance
        story.append(Paragraph(html.escape(section.heading), heading))
        story.extend(Paragraph(html.escape(p), body) for p in section.paragraphs)
    SimpleDocTemplate(str(path), pagesize=A4, title=doc.title, invariant=True).build(story)
    return path


def write_html(doc: Document, path: Path) -> Path:
    parts = [
        f'<!DOCTYPE html><html lang="{doc.lang}"><head><meta charset="utf-8"><title>{html.escape(doc.title)}</title>',
        "<style>body{font-family:sans-serif}</style><script>var tracking = 1;</script></head><body>",
        f"<h1>{html.escape(doc.title)}</h1>",
    ]
    for section in doc.sections:
        parts.append(f"<h2>{html.escape(section.heading)}</h2>")
        parts.extend(f"<p>{html.escape(p)}</p>" for p in section.paragraphs)
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def to_markdown(doc: Document) -> str:
    lines = [f"# {doc.title}", ""]
    for section in doc.sections:
        lines += [f"## {section.heading}", ""]
        for paragraph in section.paragraphs:
            lines += [paragraph, ""]
    return "\n".join(lines)


def write_md(doc: Document, path: Path) -> Path:
    path.write_text(to_markdown(doc), encoding="utf-8")
    return path


def write_txt(doc: Document, path: Path) -> Path:
    text = "\n\n".join([doc.title, *(f"{s.heading}\n" + "\n".join(s.paragraphs) for s in doc.sections)])
    path.write_text(text, encoding="utf-8")
    return path


def write_csv(doc: Document, path: Path) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["section", "text"])
    for section in doc.sections:
        for paragraph in section.paragraphs:
            writer.writerow([section.heading, paragraph])
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def write_json(doc: Document, path: Path) -> Path:
    data = {"title": doc.title, "sections": [{"heading": s.heading, "text": list(s.paragraphs)} for s in doc.sections]}
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


WRITERS: dict[str, Callable[[Document, Path], Path]] = {
    "docx": write_docx,
    "pptx": write_pptx,
    "xlsx": write_xlsx,
    "pdf": write_pdf,
    "html": write_html,
    "md": write_md,
    "txt": write_txt,
    "csv": write_csv,
    "json": write_json,
}


def write(doc: Document, directory: Path, stem: str, fmt: str) -> Path:
    return WRITERS[fmt](doc, directory / f"{stem}.{fmt}")
