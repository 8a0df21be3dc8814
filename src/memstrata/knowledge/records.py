"""Chunks as memories: kind ``knowledge``, in the user's scope, with provenance into the source Markdown.

Every chunk memory carries ``metadata.collection`` (so a search can take knowledge alone, or leave it
out, with a metadata or kind filter), the source and its hash (what re-ingestion compares), the heading
path and page, and ``Provenance(source="document", document=<source>, span=(start, end))``: the span
is into the stable Markdown, whose hash is kept too, so a hit can show the text around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memstrata.errors import InvalidInputError
from memstrata.knowledge.chunking.base import SplitResult
from memstrata.knowledge.convert import ConvertedDocument
from memstrata.knowledge.markdown import HeadingIndex
from memstrata.knowledge.tokens import count_tokens
from memstrata.patterns import lazy_pattern
from memstrata.storage.knowledge_protocol import SourceRecord
from memstrata.types import MemoryItem, MemoryKind, Provenance, Scope, new_id
from memstrata.write.ingest import new_memory

KNOWLEDGE = MemoryKind.KNOWLEDGE.value
_COLLECTION = lazy_pattern(r"^[^\x00-\x1f/\\]{1,64}$")


def check_collection(name: str) -> str:
    name = name.strip()
    if not _COLLECTION.match(name):
        raise InvalidInputError(
            f"collection {name!r} must be 1-64 characters without slashes or control characters, e.g. 'handbook'"
        )
    return name


@dataclass(frozen=True)
class KnowledgeChunk:
    index: int
    text: str  # exactly doc.markdown[start:end]
    start: int
    end: int
    tokens: int
    heading_path: tuple[str, ...]
    page: int | None


def body_start(markdown: str, start: int, end: int) -> int:
    """Where a chunk's own text begins, after any heading lines that open it: the heading path and page
    are read there (a chunk that opens with a title and a chapter heading belongs to the chapter)."""
    position = start
    while position < end and markdown.startswith("#", position):
        newline = markdown.find("\n", position, end)
        if newline == -1:
            return start
        position = newline + 1
        while position < end and markdown[position] in " \t\n":
            position += 1
    return position if position < end else start


def chunks_of(doc: ConvertedDocument, split: SplitResult) -> list[KnowledgeChunk]:
    headings = HeadingIndex(doc.markdown)
    chunks = []
    for index, piece in enumerate(split.pieces):
        text = doc.markdown[piece.start : piece.end]
        anchor = body_start(doc.markdown, piece.anchor, piece.end)
        chunks.append(
            KnowledgeChunk(
                index=index,
                text=text,
                start=piece.start,
                end=piece.end,
                tokens=count_tokens(text),
                heading_path=headings.path_at(anchor),
                page=doc.page_at(anchor),
            )
        )
    return chunks


def chunk_memories(
    doc: ConvertedDocument,
    chunks: list[KnowledgeChunk],
    *,
    scope: Scope,
    collection: str,
    chunker: str,
    now: datetime,
) -> list[MemoryItem]:
    return [
        new_memory(
            scope,
            chunk.text,
            now=now,
            kind=KNOWLEDGE,
            metadata={
                "collection": collection,
                "source": doc.source,
                "source_hash": doc.source_hash,
                "markdown_hash": doc.markdown_hash,
                "format": doc.format,
                "title": doc.title,
                "chunk": chunk.index,
                "chunks": len(chunks),
                "heading_path": list(chunk.heading_path),
                "page": chunk.page,
                "tokens": chunk.tokens,
                "chunker": chunker,
            },
            provenance=Provenance(source="document", document=doc.source, span=(chunk.start, chunk.end)),
        )
        for chunk in chunks
    ]


def source_record(
    doc: ConvertedDocument,
    chunks: list[KnowledgeChunk],
    *,
    scope: Scope,
    collection: str,
    chunker: str,
    size: tuple[int, int],
    version: int,
    now: datetime,
) -> SourceRecord:
    """The source row written with a document's chunks: its stable Markdown and how it was cut."""
    return SourceRecord(
        id=new_id(),
        scope=scope,
        collection=collection,
        source=doc.source,
        source_hash=doc.source_hash,
        markdown=doc.markdown,
        markdown_hash=doc.markdown_hash,
        format=doc.format,
        title=doc.title,
        pages=doc.pages,
        page_starts=doc.page_starts,
        chunker=chunker,
        chunk_size=size[0],
        overlap=size[1],
        chunks=len(chunks),
        tokens=sum(chunk.tokens for chunk in chunks),
        notes=doc.notes,
        version=version,
        created_at=now,
        updated_at=now,
    )
