"""Knowledge sources as a store keeps them: one row per version of an ingested document.

A row holds the stable Markdown the chunks point into (so a hit can show the text around it without
the original file), the hashes re-ingestion compares, and how the document was cut. Rows are written in
the same WriteBatch as their chunks (``WriteBatch.sources``), so a source and its chunks are stored
together or not at all. A changed document gets a new row and its previous one is retired in the same
batch: one live (active) row per (scope, collection, source), older ones kept as history.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Protocol

from pydantic import Field

from memstrata.types import Frozen, Scope


class SourceStatus(StrEnum):
    ACTIVE = "active"
    RETIRED = "retired"


class SourceRecord(Frozen):
    id: str
    scope: Scope
    collection: str
    source: str  # the path, URL or "upload:<name>" the chunks name in metadata.source
    source_hash: str
    markdown: str
    markdown_hash: str
    format: str
    title: str = ""
    pages: int = 1
    page_starts: tuple[int, ...] = ()
    chunker: str = ""
    chunk_size: int = 0
    overlap: int = 0
    chunks: int = 0
    tokens: int = 0
    status: SourceStatus = SourceStatus.ACTIVE
    notes: tuple[str, ...] = ()
    version: int = 1
    created_at: datetime
    updated_at: datetime
    retired_at: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SourceSummary(Frozen):
    """A source without its Markdown: what listings and the re-ingestion planner need."""

    id: str
    collection: str
    source: str
    source_hash: str
    format: str
    title: str
    pages: int
    chunks: int
    tokens: int
    chunker: str
    version: int
    updated_at: datetime


class CollectionCounts(Frozen):
    name: str
    sources: int
    chunks: int
    tokens: int
    pages: int
    formats: dict[str, int]


class KnowledgeStore(Protocol):
    """``store.knowledge``: reads of the sources table. Every read applies the scope inside its query."""

    def sources(
        self, scope: Scope, collection: str | None = None, *, prefix: str | None = None, limit: int = 1_000_000
    ) -> list[SourceSummary]:
        """Active sources of exactly ``scope`` (no wider), of one collection or all, optionally under a
        source prefix (a folder), ordered by collection and source."""
        ...

    def source(self, scope: Scope, collection: str, source: str) -> SourceRecord | None:
        """The active version of one source, Markdown included."""
        ...

    def source_versions(self, scope: Scope, collection: str, source: str) -> list[SourceRecord]:
        """Every version of one source, oldest first (retired ones included)."""
        ...

    def collections(self, scope: Scope) -> list[CollectionCounts]:
        """Active sources of exactly ``scope`` grouped by collection (one GROUP BY query)."""
        ...
