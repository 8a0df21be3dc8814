"""What the vault returns: frozen, validated records that every interface serialises as they are."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from memstrata.types import Frozen, UtcDatetime
from memstrata.vault.layout import Layer


class NoteRef(Frozen):
    """A note and the version a write must name to change it (see :class:`StaleVersionError`)."""

    path: str
    version: str


class SyncReport(Frozen):
    new: int = 0
    edited: int = 0
    moved: int = 0
    deleted: int = 0
    unchanged: int = 0
    sections_added: int = 0
    sections_updated: int = 0
    sections_deleted: int = 0
    embedded: int = Field(default=0, description="section texts the embedder ran on (the rest came from the cache)")
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()


class NoteView(Frozen):
    """A note read progressively: headings down to ``depth``, the first ``sentences`` of each section."""

    path: str
    version: str
    title: str
    domain: str
    layer: Layer
    frontmatter: dict[str, Any]
    text: str
    tokens: int
    depth: int
    sentences: int | None
    truncated: bool = Field(description="true when something was left out: deeper headings, later sentences")
    outline: tuple[str, ...] = Field(default=(), description="every heading path of the note, to ask for more")


class VaultHit(Frozen):
    path: str
    domain: str
    title: str
    heading: str
    layer: Layer
    text: str
    score: float
    uses: int
    version: str
    memory_id: str
    span: tuple[int, int] | None = None


class NoteSummary(Frozen):
    path: str
    title: str
    domain: str
    layer: Layer
    tags: tuple[str, ...] = ()
    category: str | None = None
    concepts: tuple[str, ...] = ()
    version: str
    uses: int = 0
    last_used: UtcDatetime | None = None
    updated_at: UtcDatetime


class DomainSummary(Frozen):
    name: str
    notes: int
    layers: dict[str, int]
    categories: dict[str, int]


class ContextPiece(Frozen):
    path: str
    layer: str
    depth: int
    sentences: int | None
    tokens: int


class DomainContext(Frozen):
    domain: str
    text: str
    tokens: int
    budget_tokens: int
    pieces: tuple[ContextPiece, ...]


class RuleFile(Frozen):
    path: str
    applies_to: str = Field(description="'all', or 'agent:<id>' for one agent's rules")
    text: str = Field(description="the file, verbatim")
    checksum: str


class RulesBlock(Frozen):
    files: tuple[RuleFile, ...]
    text: str = Field(description="every rules file verbatim, in order, each after a comment naming it")
    tokens: int


class ForgetCandidate(Frozen):
    path: str
    title: str
    uses: int
    idle_days: float
    version: str


class InitReport(Frozen):
    root: str
    created: tuple[str, ...]
