"""Ingestion, file by file: walk → hash → plan → convert (sandboxed) → chunk → embed → write.

The corpus is streamed: one document's Markdown and chunks are in memory at a time, and each is
written in its own transaction, so a crash loses at most the document in flight and the next run
(which skips everything whose hash is already indexed) resumes there. Any failure of one file
(rejected by the limits, unparseable, a model that did not answer) becomes that file's outcome in
the report, and the run goes on; a failed file keeps its previously indexed version.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from memstrata.errors import MemstrataError
from memstrata.knowledge.chunking import ChunkerName, ChunkSize, make_chunker
from memstrata.knowledge.convert import DOCUMENT_FORMATS, ConvertedDocument, file_hash, format_of, normalise, title_of
from memstrata.knowledge.limits import MB, EmptySource, IngestLimits, SourceRejected, precheck
from memstrata.knowledge.media import MediaModels, MediaSkipped, media_markdown
from memstrata.knowledge.plan import plan
from memstrata.knowledge.progress import NullProgress, ProgressSink
from memstrata.knowledge.records import check_collection, chunk_memories, chunks_of, source_record
from memstrata.knowledge.sandbox import ConversionSandbox
from memstrata.knowledge.state import IndexedSource, indexed_sources, source_chunks, unrecorded_sources
from memstrata.knowledge.walk import DEFAULT_EXCLUDES, Found, discover
from memstrata.knowledge.writer import KnowledgeWriter
from memstrata.patterns import lazy_pattern
from memstrata.providers.llm import ChatModel
from memstrata.providers.protocol import Embedder
from memstrata.storage.protocol import Store
from memstrata.types import Frozen, MemoryItem, Scope, utcnow

Status = Literal["added", "replaced", "unchanged", "retired", "skipped", "failed"]


class IngestOptions(Frozen):
    collection: str = "default"
    chunker: ChunkerName = "structure"
    size: ChunkSize = Field(default_factory=ChunkSize)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    retire_missing: bool = True  # sources indexed under the walked folders but gone from disk leave search
    limits: IngestLimits = Field(default_factory=IngestLimits)


@dataclass(frozen=True)
class SourceOutcome:
    source: str
    status: Status
    format: str | None = None
    pages: int = 0
    chunks: int = 0
    tokens: int = 0
    seconds: float = 0.0
    error: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class IngestReport:
    collection: str
    chunker: str
    outcomes: list[SourceOutcome] = field(default_factory=list)
    seconds: float = 0.0
    embedded: int = 0  # chunk texts sent through the embedder (cache hits included)
    embedded_from_cache: int = 0
    model_calls: int = 0

    def count(self, status: Status) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)

    @property
    def failed(self) -> list[SourceOutcome]:
        return [outcome for outcome in self.outcomes if outcome.status == "failed"]

    @property
    def pages(self) -> int:
        return sum(outcome.pages for outcome in self.outcomes)

    @property
    def chunks(self) -> int:
        return sum(outcome.chunks for outcome in self.outcomes)

    def summary(self) -> dict[str, Any]:
        statuses: tuple[Status, ...] = ("added", "replaced", "unchanged", "retired", "skipped", "failed")
        return {
            "collection": self.collection,
            "chunker": self.chunker,
            **{status: self.count(status) for status in statuses},
            "pages": self.pages,
            "chunks": self.chunks,
            "embedded": self.embedded,
            "embedded_from_cache": self.embedded_from_cache,
            "model_calls": self.model_calls,
            "seconds": round(self.seconds, 3),
        }


_NOT_TEXT = lazy_pattern(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")


def _looks_binary(text: str) -> bool:
    """More than 1 % of the characters are control characters or undecodable bytes: random bytes named .md or
    .html were ingested as searchable mojibake (an HTML parser takes any bytes and keeps them as text)."""
    sample = text[:100_000]
    return bool(sample) and len(_NOT_TEXT.findall(sample)) > 0.01 * len(sample)


def convert_source(
    path: Path,
    fmt: str,
    *,
    source: str,
    digest: str,
    limits: IngestLimits,
    sandbox: ConversionSandbox,
    media: MediaModels,
) -> ConvertedDocument:
    """One file as stable Markdown, or ``SourceRejected`` / ``MediaSkipped`` saying why not."""
    notes = precheck(path, fmt, limits)
    if fmt in DOCUMENT_FORMATS.values():
        raw, title = sandbox.convert(path, fmt)
    else:
        raw, title = media_markdown(path, fmt, media), None
    if _looks_binary(raw):
        raise SourceRejected(f"{path.name} holds binary data, not text (control characters or undecodable bytes "
                             "throughout); check the file, or give it its real extension")  # fmt: skip
    if len(raw) > limits.max_markdown_chars:
        raise SourceRejected(
            f"{path.name} converts to {len(raw):,} characters, over ingest.max_markdown_chars="
            f"{limits.max_markdown_chars:,}; split the document"
        )
    markdown, pages = normalise(raw, fmt)
    if not markdown.strip():
        if fmt == "pdf":  # a scan: the user has something to do
            raise SourceRejected(f"no text found in {path.name} (a scanned PDF has no text layer: run OCR first)")
        raise EmptySource(f"no text found in {path.name}")
    return ConvertedDocument(
        source=source,
        format=fmt,
        source_hash=digest,
        markdown=markdown,
        title=(title or "").strip() or title_of(markdown, path.stem),
        page_starts=pages,
        notes=notes,
    )


class Ingestor:
    """Ingests paths into one collection of one scope. Not thread-safe: one run at a time."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        scope: Scope,
        options: IngestOptions | None = None,
        *,
        model: ChatModel | None = None,
        media: MediaModels | None = None,
        progress: ProgressSink | None = None,
        clock: Any = utcnow,
    ) -> None:
        self.store = store
        self.scope = scope
        self.options = options or IngestOptions()
        self.collection = check_collection(self.options.collection)
        self.chunker = make_chunker(self.options.chunker, self.options.size, embedder=embedder, model=model)
        self.media = media or MediaModels()
        self.progress: ProgressSink = progress or NullProgress()
        self.writer = KnowledgeWriter(store, embedder, clock=clock)
        self._clock = clock

    def run(self, paths: Sequence[Path | str]) -> IngestReport:
        started = time.perf_counter()
        self.writer.check_embedder()
        report = IngestReport(self.collection, self.chunker.name)
        found = list(discover([Path(p) for p in paths], self.options.include, self.options.exclude))
        roots = {item.root for item in found} | {Path(p).expanduser().absolute() for p in paths}
        ingestible: list[tuple[Found, str]] = []
        for item in found:
            fmt = format_of(item.path)
            if fmt is None:
                report.outcomes.append(
                    SourceOutcome(item.source, "skipped", error=f"unsupported file type {item.path.suffix!r}")
                )
            else:
                ingestible.append((item, fmt))
        on_disk = {item.source: self._digest(item.path) for item, _ in ingestible}
        every = indexed_sources(self.store, self.scope, self.collection)
        indexed = {source: known for source, known in every.items() if _under(source, roots)}
        # Chunks without a source row (an older store) are redone once: planned as changed, replaced whole.
        unrecorded = {s: chunks for s, chunks in unrecorded_sources(self.store, self.scope, self.collection,
                                                                     every).items() if _under(s, roots)}  # fmt: skip
        hashes = {s: i.source_hash for s, i in indexed.items()} | dict.fromkeys(unrecorded, "")
        work = plan(on_disk, hashes, retire_missing=self.options.retire_missing)
        report.outcomes += [SourceOutcome(source, "unchanged") for source in work.unchanged]
        self.progress.start(len(work.work))
        with ConversionSandbox(self.options.limits) as sandbox:
            for item, fmt in ingestible:
                if item.source in work.work:
                    previous = indexed.get(item.source)
                    old = unrecorded.get(item.source, [])
                    report.outcomes.append(self._one(item, fmt, on_disk[item.source], previous, sandbox, report, old))
        for source in work.retire:
            chunks = self._retire(source, f"source removed: {source}", unrecorded.get(source, []))
            report.outcomes.append(SourceOutcome(source, "retired", chunks=chunks))
        return self._finished(report, started)

    def run_one(self, path: Path | str, *, source: str, fmt: str | None = None) -> IngestReport:
        """One file recorded under ``source`` instead of its path: an upload (``upload:<name>``) or a fetched
        URL, kept in a temporary file. The same source ingested again with the same bytes does nothing."""
        started = time.perf_counter()
        self.writer.check_embedder()
        report = IngestReport(self.collection, self.chunker.name)
        item = Found(Path(path).absolute(), Path(path).absolute(), name=source)
        fmt = fmt or format_of(item.path)
        if fmt is None:
            report.outcomes.append(
                SourceOutcome(source, "skipped", error=f"unsupported file type {item.path.suffix!r}")
            )
            return self._finished(report, started)
        digest = self._digest(item.path)
        previous = indexed_sources(self.store, self.scope, self.collection, prefix=source).get(source)
        if previous is not None and previous.source_hash == digest:
            report.outcomes.append(SourceOutcome(source, "unchanged"))
            return self._finished(report, started)
        self.progress.start(1)
        with ConversionSandbox(self.options.limits) as sandbox:
            report.outcomes.append(self._one(item, fmt, digest, previous, sandbox, report))
        return self._finished(report, started)

    def _finished(self, report: IngestReport, started: float) -> IngestReport:
        self.progress.finish()
        report.seconds = time.perf_counter() - started
        report.embedded, report.embedded_from_cache = self.writer.stats.texts, self.writer.stats.from_cache
        return report

    def _retire(self, source: str, reason: str, unrecorded: Sequence[MemoryItem] = ()) -> int:
        """A source's chunks out of search: those written before sources were recorded, else the recorded source's.
        Returns how many."""
        if unrecorded:
            self.writer.retire(unrecorded, reason=reason)
            return len(unrecorded)
        return self.writer.retire_source(self.scope, self.collection, source, reason=reason)

    def _one(
        self,
        item: Found,
        fmt: str,
        digest: str,
        previous: IndexedSource | None,
        sandbox: ConversionSandbox,
        report: IngestReport,
        unrecorded: Sequence[MemoryItem] = (),
    ) -> SourceOutcome:
        started = time.perf_counter()
        self.progress.file_started(item.display_name)
        try:
            doc = convert_source(
                item.path,
                fmt,
                source=item.source,
                digest=digest,
                limits=self.options.limits,
                sandbox=sandbox,
                media=self.media,
            )
            self.progress.converted(doc.pages)
            split = self.chunker.split(doc.markdown)
            report.model_calls += split.model_calls
            chunks = chunks_of(doc, split)
            self.progress.chunked(len(chunks))
            now = self._now()
            items = chunk_memories(
                doc, chunks, scope=self.scope, collection=self.collection, chunker=self.chunker.name, now=now
            )
            size = (self.options.size.size, self.options.size.overlap)
            version = previous.summary.version + 1 if previous else 1
            record = source_record(doc, chunks, scope=self.scope, collection=self.collection,
                                   chunker=self.chunker.name, size=size, version=version, now=now)  # fmt: skip
            stored = self.store.knowledge.source(self.scope, self.collection, item.source) if previous else None
            replaces = source_chunks(self.store, self.scope, self.collection, item.source) if previous else unrecorded
            reason = f"{'re-' if previous or unrecorded else ''}ingested {item.display_name} into {self.collection}"
            self.writer.write_document(items, source=record, replaces=replaces, previous=stored, reason=reason,
                                       on_embedded=self.progress.embedded)  # fmt: skip
        except EmptySource as exc:
            if previous is None and not unrecorded:
                return self._ended(item, "skipped", fmt, started, str(exc))
            # emptied since it was ingested: its old chunks leave search, as a deleted file's do (they answered
            # on, and the collection still counted it: a user trial)
            retired = self._retire(
                item.source, f"source emptied: {item.source}", () if previous is not None else unrecorded
            )
            self.progress.file_done()
            return SourceOutcome(item.source, "retired", fmt, chunks=retired, seconds=time.perf_counter() - started,
                                 error=str(exc))  # fmt: skip
        except MediaSkipped as exc:
            return self._ended(item, "skipped", fmt, started, str(exc))
        except (SourceRejected, MemstrataError) as exc:
            return self._ended(item, "failed", fmt, started, str(exc))
        except Exception as exc:  # one file's surprise must not end the batch; the report names it
            return self._ended(item, "failed", fmt, started, f"unexpected {type(exc).__name__}: {exc}")
        self.progress.file_done()
        return SourceOutcome(
            item.source,
            "replaced" if previous or unrecorded else "added",
            fmt,
            pages=doc.pages,
            chunks=len(chunks),
            tokens=sum(chunk.tokens for chunk in chunks),
            seconds=time.perf_counter() - started,
            notes=doc.notes + split.notes,
        )

    def _digest(self, path: Path) -> str:
        """The file's hash. A file over the size limit is not read: it gets a marker that matches no hash, so
        it is planned, fails its precheck with a clear error, and an older indexed version stays as it was."""
        size = path.stat().st_size
        return f"oversize:{size}" if size > self.options.limits.max_file_mb * MB else file_hash(path)

    def _ended(self, item: Found, status: Status, fmt: str, started: float, message: str) -> SourceOutcome:
        self.progress.file_done()
        return SourceOutcome(item.source, status, fmt, seconds=time.perf_counter() - started, error=message)

    def _now(self) -> datetime:
        now: datetime = self._clock()
        return now


def _under(source: str, roots: set[Path]) -> bool:
    """Whether an indexed source lies under one of the paths of this run (only those may be retired)."""
    return any(source == root.as_posix() or source.startswith(root.as_posix().rstrip("/") + "/") for root in roots)


def ingest(
    store: Store,
    embedder: Embedder,
    scope: Scope,
    paths: Sequence[Path | str],
    options: IngestOptions | None = None,
    **kwargs: Any,
) -> IngestReport:
    """One-call form of :class:`Ingestor` (keyword arguments: model, media, progress, clock)."""
    return Ingestor(store, embedder, scope, options, **kwargs).run(paths)
