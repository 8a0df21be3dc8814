"""REST endpoints for knowledge (``memory.knowledge``): upload a document into a collection, list and show
collections, read a source's Markdown or the text around a hit, remove a collection.

An upload is a multipart form with one ``file``. It is copied in blocks to a private temporary folder
under ``[ingest] max_upload_mb`` (413 past it); its extension must be a supported format (422 otherwise,
like any invalid input); it is recorded as ``upload:<name>``, never under the temporary path, so the same
name uploaded again with the same bytes does nothing and with new bytes replaces that source's chunks.
On a keyless server a multipart POST is what a web page may send without asking, so the browser guard
refuses it unless it carries the ``X-Memstrata-Client`` header.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, HTTPException, Path, Query, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel

from memstrata.api.models import NO_NUL, TEXT_PATTERN
from memstrata.api.routes import ERRORS, CallerDep, ScopeDep, problems
from memstrata.errors import InvalidInputError
from memstrata.knowledge.chunking import CHUNKER_NAMES
from memstrata.knowledge.convert import format_of
from memstrata.knowledge.limits import MB
from memstrata.patterns import lazy_pattern
from memstrata.storage.knowledge_protocol import CollectionCounts, SourceRecord, SourceSummary

router = APIRouter(prefix="/v1/knowledge", responses=ERRORS, tags=["knowledge"])
UPLOAD = problems(s413="the file is over [ingest] max_upload_mb", s422="not a supported type, or cannot be read")
CollectionName = Annotated[str, Path(min_length=1, max_length=64, pattern=TEXT_PATTERN)]
CollectionQuery = Annotated[str, Query(min_length=1, max_length=64, pattern=TEXT_PATTERN)]
_BLOCK = 1 << 20
_UNSAFE = lazy_pattern(r"[^\w.\-]+")


class SourceOutcomeOut(BaseModel):
    source: str
    status: str
    format: str | None = None
    pages: int = 0
    chunks: int = 0
    tokens: int = 0
    seconds: float = 0.0
    error: str | None = None
    notes: list[str] = []


class IngestResult(BaseModel):
    summary: dict[str, Any]
    sources: list[SourceOutcomeOut]


class SourceSpanOut(BaseModel):
    memory_id: str
    collection: str
    source: str
    title: str
    page: int | None
    heading_path: list[str]
    span: tuple[int, int]
    before: str
    text: str
    after: str


class RemovedOut(BaseModel):
    collection: str
    sources: int
    chunks: int


def _upload_name(filename: str | None) -> str:
    """The upload's own name, reduced to a safe file name; its extension decides the format."""
    name = _UNSAFE.sub("_", (filename or "").replace("\\", "/").rsplit("/", 1)[-1]).strip("._")[:128]
    if not name or format_of(FilePath(name)) is None:
        raise InvalidInputError(
            f"file {filename!r} is not a supported document type (pdf, docx, pptx, xlsx, html, csv, json, md, txt, "
            "or an image/audio file when a model is configured)"
        )
    return name


def _copy_limited(upload: UploadFile, target: FilePath, limit_mb: float) -> None:
    limit, copied = int(limit_mb * MB), 0
    with target.open("wb") as out:
        while block := upload.file.read(_BLOCK):
            copied += len(block)
            if copied > limit:
                raise HTTPException(413, f"the upload is over [ingest] max_upload_mb={limit_mb:g}; split the file")
            out.write(block)


async def _only_the_file(request: Request) -> None:
    """The upload's options are query parameters; a form field beside the file was dropped without a word, so
    ``collection=wanted`` sent as a field filed the document under "default"."""
    form = await request.form()  # parsed once: Starlette keeps it for the route's own File parameter
    if not form.getlist("file"):  # a form without its file was told to send JSON (415)
        raise InvalidInputError("send the document as multipart/form-data in a field named file (curl -F file=@a.md)")
    if len(form.getlist("file")) > 1:  # the route read the last one and dropped the others without a word
        raise InvalidInputError("one document per upload: send each file in a request of its own")
    extra = sorted({name for name in form if name != "file"})
    if extra:
        raise RequestValidationError([
            {"type": "extra_forbidden", "loc": ("body", name), "input": None,
             "msg": f"form field {name!r} is not read: send only the file in the form, and collection, chunker, "
                    "size and overlap in the query string (?collection=...)"}
            for name in extra
        ])  # fmt: skip


@router.post("", status_code=201, response_model=IngestResult, responses=UPLOAD, dependencies=[Depends(_only_the_file)])
def upload(
    call: CallerDep,
    ids: ScopeDep,
    file: Annotated[UploadFile, File(description="the document; its name's extension decides the format")],
    collection: CollectionQuery = "default",
    chunker: Annotated[str | None, Query(pattern=f"^({'|'.join(CHUNKER_NAMES)})$")] = None,
    size: Annotated[int | None, Query(ge=8, le=8192, description="chunk size in tokens")] = None,
    overlap: Annotated[int | None, Query(ge=0, le=4096, description="overlap in tokens")] = None,
) -> IngestResult:
    """Ingest one uploaded document into a collection (recorded as ``upload:<name>``); the report says what
    happened to it. A document that cannot be read is refused (422) with the reason: one upload is one
    document, and a 201 for nothing stored read as success."""
    name = _upload_name(file.filename)
    scope = call.scope(ids)
    with tempfile.TemporaryDirectory(prefix="memstrata-upload-") as folder:
        path = FilePath(folder) / name
        _copy_limited(file, path, call.memory.settings.ingest.max_upload_mb)
        report = call.memory.knowledge.ingest_file(path, source=f"upload:{name}", collection=collection,
                                                   chunker=chunker, size=size, overlap=overlap, **scope)  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)
    unread = [outcome for outcome in report.outcomes if outcome.status in ("failed", "skipped")]
    if unread and len(unread) == len(report.outcomes):  # nothing stored (an empty file is skipped, not failed)
        raise InvalidInputError(f"cannot read {name}: {unread[0].error}")
    sources = [SourceOutcomeOut.model_validate(asdict(outcome)) for outcome in report.outcomes]
    return IngestResult(summary=report.summary(), sources=sources)


@router.get("/collections", response_model=list[CollectionCounts])
def collections(call: CallerDep, ids: ScopeDep) -> list[CollectionCounts]:
    """The collections of a scope: sources, chunks, tokens, pages and formats."""
    return call.memory.knowledge.collections(**call.scope(ids))


@router.get("/collections/{name}", response_model=list[SourceSummary])
def sources(name: CollectionName, call: CallerDep, ids: ScopeDep) -> list[SourceSummary]:
    """The live sources of one collection."""
    return call.memory.knowledge.sources(name, **call.scope(ids))


@router.delete("/collections/{name}", response_model=RemovedOut, responses=problems(s409="confirm=true is needed"))
def remove(name: CollectionName, call: CallerDep, ids: ScopeDep, confirm: bool = False) -> RemovedOut:
    """Take a collection out of search (chunks soft-deleted, history kept, sources retired)."""
    removed = call.memory.knowledge.remove(name, confirm=confirm, **call.scope(ids))
    return RemovedOut.model_validate(asdict(removed))


@router.get("/source", response_model=SourceRecord)
def source(
    call: CallerDep,
    ids: ScopeDep,
    collection: CollectionQuery,
    source: Annotated[str, Query(min_length=1, max_length=4096, pattern=NO_NUL)],
) -> SourceRecord:
    """One live source with its stable Markdown (what chunk spans point into)."""
    return call.memory.knowledge.source(collection, source, **call.scope(ids))


@router.get("/chunks/{memory_id}/around", response_model=SourceSpanOut)
def around(
    memory_id: Annotated[str, Path(min_length=1, max_length=256, pattern=TEXT_PATTERN)],
    call: CallerDep,
    ids: ScopeDep,
    chars: Annotated[int, Query(ge=0, le=20_000, description="characters of context each side")] = 400,
) -> SourceSpanOut:
    """A knowledge hit in its document: the chunk and the Markdown around it."""
    return SourceSpanOut.model_validate(asdict(call.memory.knowledge.around(memory_id, chars=chars,
                                                                            **call.scope(ids))))  # fmt: skip
