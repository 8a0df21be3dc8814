"""Public value types: what goes into memstrata and what comes out.

Everything here is a frozen pydantic model, validated where it is built, so the rest of the
code can trust its inputs. Text validation (NUL characters, broken UTF-8, size limits) lives in
``validation.py`` because the limit is configurable.
"""

from __future__ import annotations

import unicodedata
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

JsonDict = dict[str, Any]


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex


INT64 = range(-(2**63), 2**63)  # integers SQLite and PostgreSQL JSON compare exactly


def string_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None when it can."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains an unpaired surrogate at position {exc.start} (broken UTF-8); fix the encoding of the source"
    if "\x00" in value:
        return f"contains a NUL character at position {value.index(chr(0))}; remove it"
    return None


def as_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted to UTC.

    A time near the ends of the calendar may not exist in UTC (``9999-12-31T23:59:59-01:00`` is in year
    10000): that is the caller's error (a ValueError, which pydantic reports per field), not an overflow.
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError(
            f"{value.isoformat()} is outside the range UTC can represent (years 1 to 9999); use a nearer date"
        ) from None


def _storable(value: str | None) -> str | None:
    """Text bound for the store: no lone surrogates (not encodable as UTF-8), no NUL."""
    problem = None if value is None else string_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


StorableText = Annotated[str, AfterValidator(_storable)]


def _not_a_number(value: object) -> object:
    """Date-times are ISO 8601 text (or datetime objects). Left to pydantic, 0 or "0" would be read as seconds since
    1970 and a typo would silently become 1970-01-01; the API documents date-time strings."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number or (isinstance(value, str) and value.strip().lstrip("+-").replace(".", "", 1).isdigit()):
        raise ValueError(f"{value!r} is not a date-time: use ISO 8601, e.g. 2026-03-01T12:00:00Z")
    return iso_datetime(value) if isinstance(value, str) else value


def iso_datetime(text: str) -> datetime:
    """ISO 8601 text read by Python's reader ("+08" is an offset too); "+25:00" or ":60" say what is wrong."""
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError as exc:
        why = "its UTC offset must lie within ±23:59" if "offset" in str(exc) else str(exc)
        example = "2026-03-01T12:00:00+08:00"
        raise ValueError(f"{text!r} is not an ISO 8601 date-time ({why}); e.g. {example}") from None


UtcDatetime = Annotated[datetime, BeforeValidator(_not_a_number), AfterValidator(as_utc)]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# Characters that change how the text after them is shown (the "Trojan source" bidi controls) or are not shown
# at all (zero-width space, word joiner, byte-order mark): in an id they make two different ids print alike in
# the CLI, the logs and the console.
_HIDING_CHARACTERS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff"
)


def _id_character_problem(value: str) -> str | None:
    """Why ``value`` cannot name a user, agent, session or tenant: a control character (a newline, a tab, a bell),
    a bidi control or an invisible space. Joiners stay allowed (Persian names use U+200C, emoji U+200D)."""
    for position, char in enumerate(value):
        if unicodedata.category(char) == "Cc" or char in _HIDING_CHARACTERS:
            return f"contains the invisible or control character U+{ord(char):04X} at position {position}; remove it"
    return None


class Scope(Frozen):
    """Who a memory belongs to. Writes need at least one of user/agent/session; reads match every given
    field. ``tenant_id`` separates organisations on a shared server: it always matches exactly (None is
    the default tenant), so no query ever crosses tenants."""

    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    tenant_id: str | None = None

    @field_validator("user_id", "agent_id", "session_id", "tenant_id")
    @classmethod
    def _non_blank(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = value.strip()
        if all(char.isspace() or unicodedata.category(char) == "Cf" for char in value):  # zero-width is blank too
            raise ValueError("scope ids must not be blank; leave the field out instead")
        if len(value) > 256:
            raise ValueError("scope ids must be at most 256 characters")
        problem = string_problem(value) or _id_character_problem(value)
        if problem is not None:
            raise ValueError(f"scope id {problem}")
        return value

    @model_validator(mode="after")
    def _at_least_one(self) -> Scope:
        if self.user_id is None and self.agent_id is None and self.session_id is None:
            raise ValueError("a scope needs at least one of user_id, agent_id or session_id")
        return self

    def contains(self, other: Scope) -> bool:
        """True when a record owned by ``other`` is visible to a query scoped by ``self``."""
        return self.tenant_id == other.tenant_id and all(
            mine is None or mine == theirs
            for mine, theirs in (
                (self.user_id, other.user_id),
                (self.agent_id, other.agent_id),
                (self.session_id, other.session_id),
            )
        )

    def label(self) -> str:
        parts = [f"{name}={value}" for name, value in self.model_dump().items() if value is not None]
        return ",".join(parts)


class TenantScope(Frozen):
    """Every scope of one tenant (None: the default tenant). Only admin counts and job lists take it: a tenant
    view that names no user, agent or session counts its whole tenant. Memory reads always need a Scope."""

    tenant_id: str | None = None


# What admin calls (stats, jobs) may cover: one scope, one whole tenant, or (None) the whole store.
AdminScope = Scope | TenantScope


class MemoryKind(StrEnum):
    """Built-in kinds. Any other lowercase identifier is accepted too (kinds are extensible)."""

    FACT = "fact"
    PREFERENCE = "preference"
    EPISODE = "episode"
    PROCEDURE = "procedure"
    KNOWLEDGE = "knowledge"


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    PENDING = "pending"
    ARCHIVED = "archived"
    DELETED = "deleted"
    SUPERSEDED = "superseded"  # replaced by a newer version (valid_to closed); kept for history


class HistoryAction(StrEnum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONFIRM = "CONFIRM"  # a pending memory became active (repeated, or confirmed by a person)
    ARCHIVE = "ARCHIVE"  # moved to cold storage
    RESTORE = "RESTORE"  # back from cold storage
    CLOSE = "CLOSE"  # a graph relation stopped being true (valid_to set); it stays as history
    MERGE = "MERGE"  # a graph entity gained an alias, or another entity was merged into it


Role = Literal["user", "assistant", "system", "tool"]


class Message(Frozen):
    """One conversation turn, stored verbatim before anything else happens to it."""

    role: Role
    content: str
    name: StorableText | None = Field(default=None, max_length=256)
    timestamp: UtcDatetime = Field(default_factory=utcnow)
    id: StorableText = Field(default_factory=new_id, min_length=1, max_length=256)


class Provenance(Frozen):
    """Where a memory came from: raw message ids, a document span, or the API call itself."""

    source: Literal["api", "messages", "document", "import"] = "api"
    message_ids: tuple[str, ...] = ()
    document: str | None = None
    span: tuple[int, int] | None = None
    # When the earliest source turn was said: a fact with its own event time ("上个月我搬到新加坡了") is dated by
    # that time, so without this an imported one looked as if learned the day it was imported.
    said_at: UtcDatetime | None = None


class MemoryItem(Frozen):
    id: str
    scope: Scope
    kind: str
    text: str
    key: str | None = None
    metadata: JsonDict = Field(default_factory=dict)
    confidence: float = 1.0
    status: MemoryStatus = MemoryStatus.ACTIVE
    event_time: UtcDatetime | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None
    # Record time: when the store stopped holding this version as current (superseded or deleted); None while
    # current. valid_from/valid_to say when the fact was true in the world (valid time, from the turns).
    recorded_to: UtcDatetime | None = None
    last_accessed_at: UtcDatetime | None = None
    access_count: int = 0
    provenance: Provenance = Field(default_factory=Provenance)
    embedding_id: str | None = None  # "model:dims" of the stored vector


class LifecycleFactors(Frozen):
    """The lifecycle signals of one memory at query time (see lifecycle/decay.py)."""

    decay: float
    recency: float
    reinforcement: float
    confidence: float
    lifecycle: float  # the product of the four


class ScoreBreakdown(Frozen):
    """Why a hit ranked where it did: every signal that went into its score.

    ``relevance`` is calibrated: in [0, 1], comparable across queries, and what the relevance
    cutoff (``search.min_relevance`` or ``threshold=``) applies to. ``final`` (the hit's score) is
    relevance times the lifecycle factor, which lies in [1 - lifecycle.weight, 1]: lifecycle can
    reorder hits of similar relevance but never lift one past a hit that is clearly more relevant.
    """

    key_match: bool = False
    key_named: bool = False  # a key fact whose key the query names by its words (read/named_keys.py): lifted
    keyword_rank: int | None = None
    keyword_score: float | None = None  # the store's raw keyword score (BM25 / ts_rank_cd)
    keyword_match: float | None = None  # keyword evidence in [0, 1]: weighted share of query words held
    vector_rank: int | None = None
    vector_similarity: float | None = None
    dense_match: float | None = None  # dense evidence in [0, 1]: similarity between floor and ceiling
    cross_script: bool = False  # memory and query share no script: keyword evidence was not expected
    time_rank: int | None = None  # rank among memories inside the query's time range, if it named one
    graph_rank: int | None = None  # rank in the graph list: reached through an entity the query names
    graph_hop: int | None = None
    graph_relation: str | None = None  # the edge that reached it, e.g. "王总 likes 红酒"
    fused: float = 0.0  # the fusion's output in [0, 1] (score fusion, or rank fusion when fusion="rrf")
    relevance: float = 0.0  # calibrated relevance in [0, 1], time boost included
    lifecycle: LifecycleFactors | None = None
    lifecycle_factor: float = 1.0  # what lifecycle multiplied the score by, in [1 - lifecycle.weight, 1]
    time_boost: float = 1.0  # 1 + lifecycle.time_boost inside a time range the query names, else 1
    # Its own final score, when it answers instead of a hit ranked above it (a later statement, the user's own:
    # read/move_up.py) and took that hit's place and score; None when it kept its own.
    moved_from: float | None = None
    later_news_of: str | None = None  # the hit above whose named one this ends or corrects (read/endings.py)
    final: float = 0.0


class SearchHit(Frozen):
    memory: MemoryItem
    score: float
    breakdown: ScoreBreakdown

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def text(self) -> str:
        return self.memory.text

    @property
    def provenance(self) -> Provenance:
        return self.memory.provenance


class HistoryEvent(Frozen):
    id: str
    memory_id: str
    scope: Scope
    action: HistoryAction
    old_text: str | None
    new_text: str | None
    actor: str
    reason: str | None
    created_at: UtcDatetime
    details: JsonDict = Field(default_factory=dict)


class StoredMessage(Frozen):
    """A raw turn as kept in the store, with the scope it was recorded under."""

    message: Message
    scope: Scope
    seq: int
    stored_at: UtcDatetime | None = None  # when the store received it (``message.timestamp``: when it was said)


class MemoryEvent(Frozen):
    """What one write did to one memory (mem0's result shape: id, memory text, event)."""

    id: str
    event: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    memory: str
    previous_memory: str | None = None
    kind: str
    index: int | None = None  # position of the add() input item it came from (a long text gives several parts)


class ItemError(Frozen):
    """An add() input item that was left out (``on_error="skip"``): its position and what to fix."""

    index: int
    error: str


class AddResult(Frozen):
    results: tuple[MemoryEvent, ...]
    message_ids: tuple[str, ...] = ()
    job_id: str | None = None  # with infer=True: the background job that extracts facts from the turns
    errors: tuple[ItemError, ...] = ()  # items left out with on_error="skip"; empty otherwise
    notes: tuple[str, ...] = ()  # what the caller should know, nothing refused: turns dated in another zone


class JobStatus(StrEnum):
    WAITING = "waiting"  # stored, waiting for the trigger policy (more turns, a cue, or flush)
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Job(Frozen):
    """One unit of background work of the LLM write path: extract and reconcile some raw turns."""

    id: str
    kind: str
    scope: Scope
    status: JobStatus
    message_ids: tuple[str, ...]
    attempts: int = 0
    lease_until: UtcDatetime | None = None
    error: str | None = None
    raw_output: str | None = None
    result: JsonDict = Field(default_factory=dict)
    created_at: UtcDatetime
    updated_at: UtcDatetime
