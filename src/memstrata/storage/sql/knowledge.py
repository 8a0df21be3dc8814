"""The knowledge_sources table: rows <-> SourceRecord, writes inside a batch's transaction, and the scoped
reads ``store.knowledge`` answers. Once for every backend.

Reads match the scope *exactly* (every scope column equal, '' for an absent field): a collection
belongs to the scope that ingested it, and a user's listing never picks up a session's collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memstrata.storage.knowledge_protocol import CollectionCounts, SourceRecord, SourceStatus, SourceSummary
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.process_rows import _required as required
from memstrata.storage.sql.rows import SCOPE_COLUMNS, prefixed, scope_columns, scope_from
from memstrata.storage.sql.upsert import upsert_scoped
from memstrata.storage.sql.where import Where
from memstrata.types import Scope

SOURCE_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, collection, source, source_hash, markdown, markdown_hash, "
    "format, title, pages, page_starts, chunker, chunk_size, overlap, chunks, tokens, status, notes, version, "
    "metadata, created_at, updated_at, retired_at"
)
_SUMMARY_COLUMNS = (
    "id, collection, source, source_hash, format, title, pages, chunks, tokens, chunker, version, updated_at"
)


def source_params(d: Dialect, record: SourceRecord) -> tuple[Any, ...]:
    return (
        record.id, *scope_columns(record.scope), record.collection, record.source, record.source_hash,
        d.model_text(record.markdown), record.markdown_hash, record.format, record.title, record.pages,
        d.json(list(record.page_starts)), record.chunker, record.chunk_size, record.overlap, record.chunks,
        record.tokens, record.status.value, d.json(list(record.notes)), record.version, d.json(record.metadata),
        d.ts(record.created_at), d.ts(record.updated_at), d.ts(record.retired_at),
    )  # fmt: skip


def source(d: Dialect, row: Sequence[Any]) -> SourceRecord:
    (
        source_id, tenant, user, agent, session, collection, name, source_hash, markdown, markdown_hash, fmt, title,
        pages, page_starts, chunker, chunk_size, overlap, chunks, tokens, status, notes, version, metadata, created,
        updated, retired,
    ) = row  # fmt: skip
    return SourceRecord.model_construct(  # validated on the way in
        id=source_id, scope=scope_from(tenant, user, agent, session), collection=collection, source=name,
        source_hash=source_hash, markdown=markdown, markdown_hash=markdown_hash, format=fmt, title=title,
        pages=pages, page_starts=tuple(d.from_json(page_starts)), chunker=chunker, chunk_size=chunk_size,
        overlap=overlap, chunks=chunks, tokens=tokens, status=SourceStatus(status), notes=tuple(d.from_json(notes)),
        version=version, metadata=d.from_json(metadata), created_at=required(d, created),
        updated_at=required(d, updated), retired_at=d.time(retired),
    )  # fmt: skip


def apply_sources(d: Dialect, tx: Tx, batch: WriteBatch) -> None:
    """Source rows of ``batch``, inserted or replaced whole within their scope. Retirements go first, so a
    new version may take the one live place its predecessor leaves in the same batch."""
    ordered = sorted(batch.sources, key=lambda record: record.status == SourceStatus.ACTIVE)
    upsert_scoped(d, tx, "knowledge_sources", SOURCE_COLUMNS, [source_params(d, record) for record in ordered])


def exact_scope(scope: Scope, alias: str) -> Where:
    where = Where()
    for column, value in zip(SCOPE_COLUMNS, scope_columns(scope), strict=True):
        where.add(f"{alias}.{column} = ?", value)
    return where


class KnowledgeTables:
    """``store.knowledge`` of the SQL store."""

    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect

    def _select(self, sql: str, params: Sequence[Any]) -> list[Any]:
        return self.d.read(lambda tx: tx.execute(sql, params).fetchall())

    def _live(self, scope: Scope, collection: str | None) -> Where:
        where = exact_scope(scope, "s").add("s.status = ?", SourceStatus.ACTIVE.value)
        if collection is not None:
            where.add("s.collection = ?", collection)
        return where

    def sources(
        self, scope: Scope, collection: str | None = None, *, prefix: str | None = None, limit: int = 1_000_000
    ) -> list[SourceSummary]:
        where = self._live(scope, collection)
        if prefix is not None:
            where.add("substr(s.source, 1, ?) = ?", len(prefix), prefix)
        found = self._select(
            f"SELECT {prefixed(_SUMMARY_COLUMNS, 's')} FROM knowledge_sources s WHERE {where.sql()} "
            "ORDER BY s.collection, s.source LIMIT ?",
            (*where.params, limit),
        )
        return [_summary(self.d, row) for row in found]

    def source(self, scope: Scope, collection: str, source_name: str) -> SourceRecord | None:
        where = self._live(scope, collection).add("s.source = ?", source_name)
        found = self._select(
            f"SELECT {prefixed(SOURCE_COLUMNS, 's')} FROM knowledge_sources s WHERE {where.sql()}", where.params
        )
        return source(self.d, found[0]) if found else None

    def source_versions(self, scope: Scope, collection: str, source_name: str) -> list[SourceRecord]:
        where = exact_scope(scope, "s").add("s.collection = ?", collection).add("s.source = ?", source_name)
        found = self._select(
            f"SELECT {prefixed(SOURCE_COLUMNS, 's')} FROM knowledge_sources s WHERE {where.sql()} ORDER BY s.seq",
            where.params,
        )
        return [source(self.d, row) for row in found]

    def collections(self, scope: Scope) -> list[CollectionCounts]:
        where = self._live(scope, None)
        found = self._select(
            "SELECT s.collection, s.format, COUNT(*), SUM(s.chunks), SUM(s.tokens), SUM(s.pages) "
            f"FROM knowledge_sources s WHERE {where.sql()} GROUP BY s.collection, s.format "
            "ORDER BY s.collection, s.format",
            where.params,
        )
        totals: dict[str, list[int]] = {}
        formats: dict[str, dict[str, int]] = {}
        for name, fmt, count, chunks, tokens, pages in found:
            running = totals.setdefault(name, [0, 0, 0, 0])
            for position, value in enumerate((count, chunks, tokens, pages)):
                running[position] += int(value or 0)
            formats.setdefault(name, {})[fmt] = int(count)
        return [
            CollectionCounts(name=name, sources=s, chunks=c, tokens=t, pages=p, formats=formats[name])
            for name, (s, c, t, p) in totals.items()
        ]


def _summary(d: Dialect, row: Sequence[Any]) -> SourceSummary:
    source_id, collection, name, source_hash, fmt, title, pages, chunks, tokens, chunker, version, updated = row
    return SourceSummary.model_construct(
        id=source_id, collection=collection, source=name, source_hash=source_hash, format=fmt, title=title,
        pages=pages, chunks=chunks, tokens=tokens, chunker=chunker, version=version, updated_at=required(d, updated),
    )  # fmt: skip
