"""``memory.knowledge``: documents as searchable knowledge. Ingest files, folders and URLs into
collections, list and show them, show the text around a hit, remove a collection.

Every call acts in the view's scope (its tenant and bound ids) and the sources table is read with that
exact scope. The agentic chunker uses the memory's configured chat model (``MemoryCore.chat_model``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

from memstrata.errors import ConfirmationRequiredError, InvalidInputError, NotFoundError
from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.knowledge.chunking import ChunkSize
from memstrata.knowledge.fetch import fetch, is_url
from memstrata.knowledge.limits import IngestLimits, SourceRejected
from memstrata.knowledge.pipeline import IngestOptions, Ingestor, IngestReport, SourceOutcome
from memstrata.knowledge.progress import ProgressSink
from memstrata.knowledge.records import KNOWLEDGE, check_collection
from memstrata.knowledge.walk import DEFAULT_EXCLUDES
from memstrata.knowledge.writer import KnowledgeWriter
from memstrata.storage.knowledge_protocol import CollectionCounts, SourceRecord, SourceSummary
from memstrata.types import Scope
from memstrata.validation import check_count, guarded


@dataclass(frozen=True)
class SourceSpan:
    """A chunk in its document: the chunk's text and what surrounds it in the stored Markdown."""

    memory_id: str
    collection: str
    source: str
    title: str
    page: int | None
    heading_path: tuple[str, ...]
    span: tuple[int, int]
    before: str
    text: str
    after: str


@dataclass(frozen=True)
class RemovedCollection:
    collection: str
    sources: int
    chunks: int


class KnowledgeAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def _ingestor(self, scope: Scope, options: IngestOptions, progress: ProgressSink | None) -> Ingestor:
        model = self._core.chat_model if options.chunker == "agentic" else None
        if options.chunker == "agentic" and model is None:
            raise InvalidInputError("the agentic chunker needs a model: configure [llm], or pick another chunker")
        return Ingestor(self._core.store, self._core.embedder, scope, options, model=model, progress=progress,
                        clock=self._core.clock)  # fmt: skip

    def options(
        self,
        *,
        collection: str = "default",
        chunker: str | None = None,
        size: int | None = None,
        overlap: int | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] | None = None,
        retire_missing: bool = True,
    ) -> IngestOptions:
        """Validated options, with ``[ingest]`` settings for whatever is not given."""
        configured = self._core.settings.ingest
        return guarded(
            lambda: IngestOptions(
                collection=collection,
                chunker=chunker or configured.chunker,
                size=ChunkSize(size=size or configured.chunk_size,
                               overlap=configured.overlap if overlap is None else overlap),
                include=tuple(include),
                exclude=DEFAULT_EXCLUDES if exclude is None else tuple(exclude),
                retire_missing=retire_missing,
                limits=IngestLimits(max_file_mb=configured.max_file_mb, timeout_s=configured.timeout_s,
                                    memory_mb=configured.memory_mb),
            ),
            what="ingest options",
        )  # fmt: skip

    def ingest(
        self,
        target: str | Path | Sequence[str | Path],
        *,
        collection: str = "default",
        chunker: str | None = None,
        size: int | None = None,
        overlap: int | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] | None = None,
        retire_missing: bool = True,
        progress: ProgressSink | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> IngestReport:
        """Files, folders (include/exclude globs) or one http(s) URL into ``collection``. Unchanged sources are
        skipped by hash, changed ones replace their chunks, sources gone from the folders are retired. A file
        that fails is reported in the IngestReport and the others go on."""
        resolved = self._binding.scope(scope)
        options = self.options(collection=collection, chunker=chunker, size=size, overlap=overlap, include=include,
                               exclude=exclude, retire_missing=retire_missing)  # fmt: skip
        ingestor = self._ingestor(resolved, options, progress)
        if is_url(target):
            return self._ingest_url(ingestor, str(target))
        paths = [target] if isinstance(target, str | Path) else list(target)
        if not paths:
            raise InvalidInputError("ingest needs at least one file, folder or URL")
        return ingestor.run(paths)

    def ingest_file(
        self,
        path: str | Path,
        *,
        source: str,
        collection: str = "default",
        chunker: str | None = None,
        size: int | None = None,
        overlap: int | None = None,
        **scope: Unpack[ScopeArgs],
    ) -> IngestReport:
        """One file recorded under ``source`` (an upload: ``upload:<name>``), not under its temporary path."""
        options = self.options(collection=collection, chunker=chunker, size=size, overlap=overlap)
        return self._ingestor(self._binding.scope(scope), options, None).run_one(path, source=source)

    def _ingest_url(self, ingestor: Ingestor, url: str) -> IngestReport:
        configured = self._core.settings.ingest
        with tempfile.TemporaryDirectory(prefix="memstrata-url-") as folder:
            try:
                path = fetch(url, Path(folder), max_mb=configured.max_url_mb, timeout_s=configured.url_timeout_s)
            except SourceRejected as exc:
                report = IngestReport(ingestor.collection, ingestor.chunker.name)
                report.outcomes.append(SourceOutcome(url, "failed", error=str(exc)))
                return report
            return ingestor.run_one(path, source=url)

    def collections(self, **scope: Unpack[ScopeArgs]) -> list[CollectionCounts]:
        return self._core.store.knowledge.collections(self._binding.scope(scope))

    def sources(self, collection: str, **scope: Unpack[ScopeArgs]) -> list[SourceSummary]:
        """The live sources of a collection; NotFoundError when it has none."""
        found = self._core.store.knowledge.sources(self._binding.scope(scope), check_collection(collection))
        if not found:
            raise NotFoundError(f"no collection {collection!r} in this scope; knowledge.collections() lists them")
        return found

    def source(self, collection: str, source: str, **scope: Unpack[ScopeArgs]) -> SourceRecord:
        """One live source with its stable Markdown."""
        found = self._core.store.knowledge.source(self._binding.scope(scope), check_collection(collection), source)
        if found is None:
            raise NotFoundError(f"no source {source!r} in collection {collection!r}; knowledge.sources() lists them")
        return found

    def around(self, memory_id: str, *, chars: int = 400, **scope: Unpack[ScopeArgs]) -> SourceSpan:
        """A knowledge hit in its document: the Markdown ``chars`` before and after the chunk, from the
        version of the source the chunk was cut from (a superseded chunk shows its own version's text)."""
        check_count(chars, "chars", 0, 1_000_000)
        resolved = self._binding.scope(scope)
        items = self._core.store.get(resolved, [memory_id])
        item = items[0] if items else None
        if item is None or item.kind != KNOWLEDGE or item.provenance.span is None:
            raise NotFoundError(f"no knowledge chunk {memory_id} in this scope")
        collection, source = str(item.metadata.get("collection")), str(item.metadata.get("source"))
        versions = self._core.store.knowledge.source_versions(item.scope, collection, source)
        wanted = item.metadata.get("markdown_hash")
        record = next((v for v in reversed(versions) if v.markdown_hash == wanted), None)
        if record is None:
            raise NotFoundError(f"the source {source!r} of chunk {memory_id} is no longer stored")
        start, end = item.provenance.span
        context = max(0, min(chars, 20_000))
        page = item.metadata.get("page")
        return SourceSpan(
            memory_id=item.id, collection=collection, source=source, title=record.title,
            page=page if isinstance(page, int) else None,
            heading_path=tuple(str(part) for part in item.metadata.get("heading_path") or ()),
            span=(start, end), before=record.markdown[max(0, start - context) : start],
            text=record.markdown[start:end], after=record.markdown[end : end + context],
        )  # fmt: skip

    def remove(self, collection: str, *, confirm: bool = False, **scope: Unpack[ScopeArgs]) -> RemovedCollection:
        """Take a collection out of search: its chunks are soft-deleted (history keeps their text) and its
        sources retired, one transaction per source."""
        resolved = self._binding.scope(scope)
        summaries = self.sources(collection, **scope)
        if not confirm:
            raise ConfirmationRequiredError(
                f"this removes {sum(s.chunks for s in summaries)} chunks of {len(summaries)} sources in collection "
                f"{collection!r}; confirm to go on (confirm=True, --yes)"
            )
        writer = KnowledgeWriter(self._core.store, self._core.embedder, clock=self._core.clock)
        reason = f"collection {collection} removed"
        removed = sum(writer.retire_source(resolved, s.collection, s.source, reason=reason) for s in summaries)
        return RemovedCollection(collection=collection, sources=len(summaries), chunks=removed)
