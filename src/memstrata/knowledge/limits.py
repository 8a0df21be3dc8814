"""Limits on what one source may cost, and the checks that run before any parser sees the bytes.

Document parsers are large attack surfaces: a 200 MB upload, a 40 KB docx that inflates to gigabytes,
a truncated PDF. Cheap checks here turn the obvious cases into a clear per-file error before parsing;
the conversion sandbox (``sandbox.py``) bounds the rest with a time limit and a memory cap.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from pydantic import Field

from memstrata.types import Frozen

MB = 1024 * 1024

# Office Open XML formats are zip archives; their unpacked size is what a parser will hold in memory.
ZIP_FORMATS = frozenset({"docx", "pptx", "xlsx"})


class IngestLimits(Frozen):
    max_file_mb: float = Field(default=50.0, gt=0)
    max_unpacked_mb: float = Field(default=300.0, gt=0)  # a zip-based document, all members together
    max_compression_ratio: float = Field(default=200.0, gt=1)  # any one zip member, unpacked / packed
    max_zip_members: int = Field(default=20_000, ge=1)
    timeout_s: float = Field(default=120.0, gt=0)  # converting one file
    memory_mb: int = Field(default=3072, ge=256)  # address space of the conversion process
    max_markdown_chars: int = Field(default=20_000_000, ge=1000)  # about 10,000 pages of text


class SourceRejected(Exception):
    """One source cannot be ingested; the message says why and what to do. Other sources go on."""


class EmptySource(SourceRejected):
    """A source with no text at all: nothing to ingest, and nothing wrong (reported as skipped, not failed)."""


def check_size(path: Path, limits: IngestLimits) -> int:
    size = path.stat().st_size
    if size > limits.max_file_mb * MB:
        raise SourceRejected(
            f"{path.name} is {size / MB:.1f} MB, over the {limits.max_file_mb:g} MB limit per file; "
            "split it, or raise ingest.max_file_mb"
        )
    if size == 0:
        raise EmptySource(f"{path.name} is empty")
    return size


def check_zip(path: Path, fmt: str, limits: IngestLimits) -> None:
    """Reject a broken or decompression-bomb docx/pptx/xlsx from its central directory alone."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceRejected(f"{path.name} is not a readable {fmt} file (damaged or truncated: {exc})") from None
    if len(members) > limits.max_zip_members:
        raise SourceRejected(f"{path.name} holds {len(members)} parts, over {limits.max_zip_members}; refused")
    unpacked = sum(member.file_size for member in members)
    if unpacked > limits.max_unpacked_mb * MB:
        raise SourceRejected(
            f"{path.name} would unpack to {unpacked / MB:.0f} MB, over the {limits.max_unpacked_mb:g} MB limit "
            "(a decompression bomb, or a very large document: raise ingest.max_unpacked_mb if you trust it)"
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > MB and ratio > limits.max_compression_ratio:
            raise SourceRejected(
                f"{path.name}: part {member.filename} is compressed {ratio:.0f}:1 "
                f"(over {limits.max_compression_ratio:g}:1), the signature of a decompression bomb; refused"
            )


def pdf_looks_truncated(path: Path) -> bool:
    """A complete PDF ends with %%EOF (give or take trailing whitespace or junk from mail gateways)."""
    with path.open("rb") as handle:
        head = handle.read(1024)
        handle.seek(max(0, path.stat().st_size - 2048))
        tail = handle.read()
    if b"%PDF-" not in head:
        raise SourceRejected(f"{path.name} is not a PDF (no %PDF- header); check the file or its extension")
    return b"%%EOF" not in tail


def precheck(path: Path, fmt: str, limits: IngestLimits) -> tuple[str, ...]:
    """Raise :class:`SourceRejected` for what must not be parsed; return notes for what is merely suspect."""
    check_size(path, limits)
    if fmt in ZIP_FORMATS:
        check_zip(path, fmt, limits)
    if fmt == "pdf" and pdf_looks_truncated(path):
        return (f"{path.name} looks truncated (no %%EOF at the end); the text found may be incomplete",)
    return ()
