"""REST endpoints: each translates the request, checks the key's scopes, and calls the Memory facade.

Handlers are plain ``def``: Memory is synchronous (SQLite, the embedder), so FastAPI runs them in
its worker threads and the event loop stays free; a fast search is the exception and runs on the loop.
Scope ids come in the body for add and search (as in the Python API's keyword arguments) and in the
query string everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import StringConstraints
from starlette.concurrency import run_in_threadpool
from starlette.convertors import StringConvertor, register_url_convertor

from memstrata.api.models import (
    NO_NUL,
    SCOPE_RULE,
    TEXT_PATTERN,
    AddRequest,
    DeletedCount,
    MarkedUsed,
    MemoryPage,
    ScopeBody,
    SearchRequest,
    Stats,
    UpdateRequest,
    UsedRequest,
    WhoAmI,
)
from memstrata.api.principal import Principal
from memstrata.api.problems import Problem
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.facade.scoping import ScopeArgs
from memstrata.memory import Memory
from memstrata.query import OrderField
from memstrata.types import AddResult, HistoryEvent, Job, JobStatus, MemoryItem, MemoryStatus, SearchHit, StoredMessage

bearer = HTTPBearer(auto_error=False, description="an API key from `memstrata keys create`")
Responses = dict[int | str, dict[str, object]]


def problems(**described: str) -> Responses:
    """Documented error responses: every one is a problem+json body."""
    return {
        int(status.removeprefix("s")): {"model": Problem, "content": {"application/problem+json": {}},
                                        "description": text}
        for status, text in described.items()
    }  # fmt: skip


ERRORS = problems(
    s400="the body is not JSON, or a header is malformed",
    s401="no API key, or an unknown or revoked one",
    s403="the key may not use this scope; or, on a keyless server, a request a web page could have sent",
    s404="no such record in the scope",
    s413="the body is over server.max_request_bytes",
    s415="keyless server: a write without Content-Type: application/json (or an X-Memstrata-Client header)",
    s422="the request does not validate: a field's value, or no scope (at least one of user_id, agent_id, session_id)",
)
router = APIRouter(prefix="/v1", responses=ERRORS)
JOB_FAILED = problems(s424="an awaited job failed")
CONFLICT = problems(s409="the write clashes with stored data (a turn id that holds another turn)")


@dataclass(frozen=True)
class Caller:
    principal: Principal
    memory: Memory  # the tenant view: every store query carries the key's tenant

    @property
    def actor(self) -> str:
        return f"rest:{self.principal.key_id or 'local'}"

    def scope(self, ids: ScopeBody) -> ScopeArgs:
        return self.principal.scope(ids.user_id, ids.agent_id, ids.session_id)

    def bound(self, scope: ScopeArgs) -> Memory:
        """The view bound to the ids of ``scope`` the key limits: for calls that read wider than their scope."""
        return self.principal.bound(self.memory, scope)


# The dependencies are async: FastAPI runs a plain ``def`` dependency in a worker thread, a hand-off per request that
# costs more than their work (a key looked up by its primary key in the key store's SQLite file, a view object).
async def caller(
    request: Request, _credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]
) -> Caller:
    # The raw header, not `_credentials`: HTTPBearer hides malformed headers, and we want to say what is wrong.
    client = request.client.host if request.client else None
    principal: Principal = request.app.state.auth.resolve(request.headers.get("authorization"), client)
    return Caller(principal, principal.memory(request.app.state.memory))


ScopeQuery = Annotated[str | None, Query(min_length=1, max_length=256, pattern=TEXT_PATTERN, description=SCOPE_RULE)]


async def scope_query(
    user_id: ScopeQuery = None, agent_id: ScopeQuery = None, session_id: ScopeQuery = None
) -> ScopeBody:
    return ScopeBody(user_id=user_id, agent_id=agent_id, session_id=session_id)


CallerDep = Annotated[Caller, Depends(caller)]
ScopeDep = Annotated[ScopeBody, Depends(scope_query)]
MemoryId = Annotated[str, Path(min_length=1, max_length=256, pattern=TEXT_PATTERN)]
JobId = Annotated[str, Path(min_length=1, max_length=256, pattern=TEXT_PATTERN)]
Reason = Annotated[str | None, Query(max_length=1000, pattern=NO_NUL, description="why, kept in the history")]


@router.post("/memories", status_code=201, response_model=AddResult, tags=["memories"],
             responses=JOB_FAILED | CONFLICT)  # fmt: skip
def add_memories(body: AddRequest, call: CallerDep) -> AddResult:
    """Store text as memories, or conversation turns (``messages``) as raw turns plus episode memories.

    With ``infer``, a background job extracts facts from the turns; ``job_id`` names it (see /v1/jobs).
    """
    try:
        result = add_payload(body, call)
    except InvalidInputError as refused:
        if not body.skipped_any:
            raise
        raise InvalidInputError(body.none_kept(str(refused))) from None
    return body.with_skipped(result)


def add_payload(body: AddRequest, call: Caller) -> AddResult:
    return call.memory.add(
        body.payload(),
        **call.scope(body),
        metadata=body.metadata,
        infer=body.infer,
        wait=body.wait,
        kind=body.kind,
        key=body.key,
        confidence=body.confidence,
        event_time=body.event_time,
        on_error=body.on_error,
        actor=call.actor,
    )


# A longer query (a pasted text) is embedded for up to a second (16,000 characters: 1 s): run on the event loop,
# eight of them held every other request and /health for 8 s (a user trial). It runs in a worker thread instead.
INLINE_QUERY_CHARS = 1_000


@router.post("/memories/search", response_model=list[SearchHit], tags=["memories"])
async def search_memories(body: SearchRequest, call: CallerDep, request: Request) -> list[SearchHit]:
    """Hybrid keyword + vector search within a scope; each hit says why it ranked (``breakdown``)."""
    scope = call.scope(body)
    search = partial(call.memory.search, body.query, **scope, limit=body.limit, filters=body.filters,
                     threshold=body.threshold, as_of=body.as_of, known_at=body.known_at,
                     include_archived=body.include_archived, mode=body.mode)  # fmt: skip
    if body.mode == "deep" or len(body.query) > INLINE_QUERY_CHARS:  # seconds, in a worker thread
        return await run_in_threadpool(search)
    # with the queries of the other searches of this round of the event loop (api/query_batches.py)
    await request.app.state.query_batches.embedded(call.memory, body.query, scope)
    # A fast search is a few milliseconds of Python, which holds the interpreter lock: handing it to a worker thread
    # and back cost more than the threads ran at once. Run here (50 clients, 2 workers, 30 % adds): 331 against 264
    # requests/s, search p95 145 against 313 ms; searches only 454 against 439/s, p95 131 against 200 ms
    # (bench/results/2026-12-06-service-inline-*.md).
    return search()


@router.post("/memories/used", response_model=MarkedUsed, tags=["memories"])
def mark_used(body: UsedRequest, call: CallerDep) -> MarkedUsed:
    """Say which memories an answer relied on. Use, not retrieval, reinforces a memory's ranking over time;
    ids outside the scope are ignored."""
    return MarkedUsed(marked=call.memory.mark_used(body.memory_ids, **call.scope(body)))


@router.get("/memories", response_model=MemoryPage, tags=["memories"])
def list_memories(
    call: CallerDep,
    ids: ScopeDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    kind: Annotated[
        list[Annotated[str, StringConstraints(pattern=r"^[a-z_][a-z0-9_\-]{0,63}$")]] | None,
        Query(description="only these kinds (lowercase identifiers)"),
    ] = None,
    status: Annotated[list[MemoryStatus] | None, Query(description="default: active only")] = None,
    order_by: OrderField = "created_at",
    descending: bool = True,
) -> MemoryPage:
    """Memories of a scope, a page at a time (newest first by default)."""
    filters: dict[str, object] = {}
    if kind:
        filters["kind"] = kind
    if status:
        filters["status"] = status
    items = call.memory.get_all(
        **call.scope(ids), filters=filters, limit=limit, offset=offset, order_by=order_by, descending=descending
    )
    next_offset = offset + len(items) if len(items) == limit else None
    return MemoryPage(items=items, limit=limit, offset=offset, next_offset=next_offset)


@router.delete("/memories", response_model=DeletedCount, tags=["memories"])
def delete_all_memories(call: CallerDep, ids: ScopeDep, reason: Reason = None) -> DeletedCount:
    """Soft-delete every live memory of the scope in one transaction; history keeps them."""
    return DeletedCount(deleted=call.memory.delete_all(**call.scope(ids), actor=call.actor, reason=reason))


class MemoryIdConvertor(StringConvertor):
    """A memory id in a path, never one of the actions beside it: ``GET /memories/used`` answered 404 "no memory
    'used'"; now only the POST route matches, so it is a 405 naming POST, as for any method a path does not take."""

    regex = r"(?!(?:search|used)$)[^/]+"


register_url_convertor("memory_id", MemoryIdConvertor())


@router.get("/memories/{memory_id:memory_id}", response_model=MemoryItem, tags=["memories"])
def get_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> MemoryItem:
    """One memory by its id, or by a unique prefix of it (the 8 characters context() shows)."""
    scope = call.scope(ids)
    return call.memory.get(call.memory.resolve_id(memory_id, **scope), **scope)


@router.patch("/memories/{memory_id:memory_id}", response_model=MemoryItem, tags=["memories"],
              responses=problems(s409="the memory is deleted"))  # fmt: skip
def update_memory(memory_id: MemoryId, body: UpdateRequest, call: CallerDep, ids: ScopeDep) -> MemoryItem:
    """Change text and/or metadata (merged); the old text stays in the history."""
    return call.memory.update(
        memory_id, body.text, metadata=body.metadata, reason=body.reason, **call.scope(ids), actor=call.actor
    )


@router.delete("/memories/{memory_id:memory_id}", response_model=MemoryItem, tags=["memories"])
def delete_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep, reason: Reason = None) -> MemoryItem:
    """Soft delete: the memory leaves search; its history keeps the text. Use /purge to remove it for good."""
    return call.memory.delete(memory_id, **call.scope(ids), actor=call.actor, reason=reason)


@router.post("/memories/{memory_id}/purge", status_code=204, tags=["memories"])
def purge_memory(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> Response:
    """Hard delete: the row, its vector, keyword entry and history are removed. Cannot be undone."""
    call.memory.purge(memory_id, **call.scope(ids))
    return Response(status_code=204)


@router.get("/memories/{memory_id}/history", response_model=list[HistoryEvent], tags=["memories"])
def memory_history(memory_id: MemoryId, call: CallerDep, ids: ScopeDep) -> list[HistoryEvent]:
    """Every change to a memory, oldest first, including the versions it superseded."""
    scope = call.scope(ids)
    return call.memory.history(call.memory.resolve_id(memory_id, **scope), **scope)


@router.get("/messages", response_model=list[StoredMessage], tags=["messages"])
def list_messages(
    call: CallerDep, ids: ScopeDep, limit: Annotated[int, Query(ge=1, le=10_000)] = 1000
) -> list[StoredMessage]:
    """The raw turns stored for a scope, oldest first: the provenance behind every memory."""
    return call.memory.messages(**call.scope(ids), limit=limit)


@router.get("/jobs", response_model=list[Job], tags=["jobs"])
def list_jobs(
    call: CallerDep,
    ids: ScopeDep,
    status: Annotated[list[JobStatus] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
) -> list[Job]:
    """Background extraction jobs (``infer``): status, errors, the model's raw output."""
    return call.memory.list_jobs(**call.scope(ids), status=[s.value for s in status or ()], limit=limit)


@router.post("/jobs/flush", response_model=list[Job], tags=["jobs"], responses=JOB_FAILED)
def flush_jobs(
    call: CallerDep, ids: ScopeDep, timeout_s: Annotated[float | None, Query(gt=0, le=600)] = None
) -> list[Job]:
    """Run every pending extraction job of the scope now and return its jobs."""
    return call.memory.flush(**call.scope(ids), timeout_s=timeout_s)


@router.post("/jobs/{job_id}/retry", response_model=Job, tags=["jobs"])
def retry_job(job_id: JobId, call: CallerDep, ids: ScopeDep) -> Job:
    """Queue a failed job again (its turns are still stored)."""
    scope = call.scope(ids)
    # Memory checks the tenant; a key limited to some users or agents must also own the job's scope.
    if call.principal.restricted or any(scope.values()):
        failed = call.memory.list_jobs(**scope, status=[JobStatus.FAILED.value], limit=10_000)
        if job_id not in {job.id for job in failed}:
            raise NotFoundError(f"no failed job {job_id} in this scope; GET /v1/jobs?status=failed lists them")
    return call.memory.retry_job(job_id)


@router.get("/stats", response_model=Stats, tags=["admin"])
def stats(call: CallerDep, ids: ScopeDep) -> Stats:
    """Counts by status and kind, raw turns, history events and vectors for the scope."""
    found = call.memory.stats(**call.scope(ids))
    return Stats.model_validate(vars(found))  # location and file size stay private to the server


@router.get("/whoami", response_model=WhoAmI, tags=["admin"])
def whoami(call: CallerDep) -> WhoAmI:
    """The tenant and scopes this request's key grants."""
    return WhoAmI.model_validate(call.principal.describe())
