"""REST endpoints for deep retrieval and context assembly: ``/v1/context`` (what an agent should read, under a
token budget) and ``/v1/memories/search/deep`` (deep search with its trace). Same pattern as ``routes.py``:
the key's scopes are checked, then the Memory facade is called."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BeforeValidator, Field

from memstrata.api.models import TEXT_PATTERN, Count, ScopedBody, TimeIn, _filter_times_are_strings
from memstrata.api.routes import ERRORS, CallerDep
from memstrata.deep.context_model import MemoryContext
from memstrata.deep.search import DeepResult
from memstrata.query import Filters

router = APIRouter(prefix="/v1", responses=ERRORS, tags=["memories"])

QueryText = Annotated[str, Field(min_length=1, max_length=20_000, pattern=TEXT_PATTERN)]
FiltersIn = Annotated[Filters | None, BeforeValidator(_filter_times_are_strings)]
AudienceIn = Annotated[
    Literal["chat", "agent"],
    Field(description="agent: more retrieval rounds in deep mode (deep.agent_rounds, default 5; chat 3)"),
]


class ContextRequest(ScopedBody):
    query: QueryText
    budget_tokens: Count = Field(default=2000, ge=64, le=1_000_000, description="the text never exceeds this")
    mode: Literal["fast", "deep"] = Field(default="fast", description="how the relevant memories are found")
    limit: Count = Field(default=10, ge=1, le=100, description="most relevant memories considered")
    filters: FiltersIn = None
    audience: AudienceIn = "chat"
    as_of: TimeIn | None = Field(default=None, description="valid time: what was true then")
    known_at: TimeIn | None = Field(default=None, description="record time: what the store held then")


class DeepSearchRequest(ScopedBody):
    query: QueryText
    limit: Count = Field(default=10, ge=1, le=1000)
    filters: FiltersIn = None
    threshold: float | None = Field(default=None, ge=0.0, le=1.0, description="minimum relevance in [0, 1]")
    audience: AudienceIn = "chat"
    as_of: TimeIn | None = Field(default=None, description="valid time: what was true then")
    known_at: TimeIn | None = Field(default=None, description="record time: what the store held then")


@router.post("/context", response_model=MemoryContext)
def context(body: ContextRequest, call: CallerDep) -> MemoryContext:
    """What an agent should read for a query: the rules layer (verbatim, first), key facts (always those whose
    key the query names), the user's standing facts (allergies, diet, home, work, family: deep/profile.py), the
    relevant memories with their source turns and dates, and the session's recent turns (with ``session_id``),
    within ``budget_tokens``, each memory cited by id. Included memories count as used. ``as_of`` / ``known_at``
    travel in time as search does."""
    scope = call.scope(body)  # context reads the user's memories from every agent: not past the key's agents
    return call.bound(scope).context(body.query, **scope, budget_tokens=body.budget_tokens, mode=body.mode,
                               limit=body.limit, filters=body.filters, audience=body.audience, as_of=body.as_of,
                               known_at=body.known_at)  # fmt: skip


@router.post("/memories/search/deep", response_model=DeepResult)
def deep_search(body: DeepSearchRequest, call: CallerDep) -> DeepResult:
    """Deep search with its trace: the understood question, every query searched, the evaluator's verdicts,
    why it stopped, and model calls, tokens and seconds."""
    scope = call.scope(body)
    return call.bound(scope).deep_search(body.query, **scope, limit=body.limit, filters=body.filters,
                                   threshold=body.threshold, audience=body.audience, as_of=body.as_of,
                                   known_at=body.known_at)  # fmt: skip
