"""The narrow storage protocol. A store keeps records; it never calls a model or provider.

Every read takes a Scope and applies it inside its own query. Every write arrives as one
:class:`WriteBatch` and is applied all-or-nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memstrata.query import Filters, ListQuery
from memstrata.records.graph import Entity, Relation
from memstrata.records.process import Artifact, Hypothesis, Step, Strategy, Task
from memstrata.storage.knowledge_protocol import KnowledgeStore, SourceRecord
from memstrata.storage.process_protocol import ProcessStore
from memstrata.types import (
    AdminScope,
    HistoryEvent,
    Job,
    JobStatus,
    MemoryItem,
    MemoryStatus,
    Message,
    Scope,
    StoredMessage,
)

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class ScoredId:
    """A candidate from one retriever: memory id, rank-bearing score (higher is better)."""

    memory_id: str
    score: float


# Statuses that end a version in record time: the store no longer holds it as current (recorded_to is set).
ENDED = frozenset({MemoryStatus.SUPERSEDED, MemoryStatus.DELETED})


@dataclass(frozen=True)
class StatusChange:
    memory_id: str
    scope: Scope
    status: MemoryStatus
    at: datetime  # record time of the change (updated_at; recorded_to when the version stops being current)
    close_validity: bool = True
    valid_to: datetime | None = None  # valid-time end when it differs from ``at`` (an event said in a turn)
    recorded_to: datetime | None = None  # record-time end when it differs from ``at`` (forget: never held)


@dataclass(frozen=True)
class JobUpdate:
    """A job state change. ``expected_attempts`` guards completion: a worker whose lease ran out and
    whose job was claimed again cannot also commit its results."""

    job_id: str
    status: JobStatus
    at: datetime
    error: str | None = None
    raw_output: str | None = None
    result: dict[str, object] | None = None
    expected_attempts: int | None = None


@dataclass(frozen=True)
class WriteBatch:
    """Everything one logical operation writes, applied in a single transaction.

    ``replacements`` carry the full new state of an existing memory; ``expected_updated_at``
    guards against a concurrent writer (optimistic locking).
    """

    messages: Sequence[tuple[Message, Scope]] = ()
    # When each of ``messages`` was first stored, by message id, where it is not now (an import keeps the original).
    message_stored_at: Mapping[str, datetime] = field(default_factory=dict)
    # Raw turns deleted for good, by (scope, message id): what forget() asked to forget, verbatim record included.
    forgotten_messages: Sequence[tuple[Scope, str]] = ()
    inserts: Sequence[MemoryItem] = ()
    replacements: Sequence[tuple[MemoryItem, datetime]] = ()
    status_changes: Sequence[StatusChange] = ()
    history: Sequence[HistoryEvent] = ()
    vectors: Sequence[tuple[str, Vector]] = ()  # (memory id, vector) for this batch's embedding_id
    embedding_id: str | None = None
    cache_entries: Sequence[tuple[str, Vector]] = ()  # (text hash, vector) for the embedding cache
    jobs: Sequence[Job] = ()
    job_updates: Sequence[JobUpdate] = ()
    release_waiting: Sequence[Scope] = ()  # waiting jobs of these exact scopes become queued
    entities: Sequence[Entity] = ()  # graph nodes, inserted or replaced whole (same id, same scope)
    entity_vectors: Sequence[tuple[str, Vector]] = ()  # (entity id, vector of its name) for embedding_id
    relations: Sequence[Relation] = ()  # graph edges, inserted or replaced whole
    # Process memory: records inserted or replaced whole (same id, same scope), with their index units above.
    tasks: Sequence[Task] = ()
    steps: Sequence[Step] = ()
    hypotheses: Sequence[Hypothesis] = ()
    artifacts: Sequence[Artifact] = ()
    strategies: Sequence[Strategy] = ()
    # Knowledge sources (one row per document version), inserted or replaced whole, beside their chunks.
    sources: Sequence[SourceRecord] = ()
    # Merge: rows already stored with the same id and content are skipped (an export imported into its own
    # store, or twice); a stored row with the same id and other content is still a ConflictError.
    skip_identical: bool = False
    # Ids of inserts planned as texts their exact scope did not hold (kind and normalised text): one another writer
    # stored since is a ConcurrentWriteError (add() plans again and finds it), never the same text twice.
    distinct_texts: Sequence[str] = ()

    def is_empty(self) -> bool:
        """No rows to write (``embedding_id``, ``skip_identical`` and ``distinct_texts`` are settings, not rows)."""
        settings = ("embedding_id", "skip_identical", "distinct_texts")
        return not any(len(getattr(self, part.name)) for part in fields(self) if part.name not in settings)


@dataclass(frozen=True)
class StoreStats:
    memories_by_status: dict[str, int]
    memories_by_kind: dict[str, int]
    messages: int
    history_events: int
    vectors: int
    embedding_id: str | None
    schema_version: int
    location: str
    size_bytes: int | None = None
    extra: dict[str, int] = field(default_factory=dict)
    read_replica: str | None = None  # PostgreSQL: the standby searches read from (store.read_url), password masked


class Store(Protocol):
    """What the Memory facade needs from a database."""

    location: str

    @property
    def process(self) -> ProcessStore:
        """Process memory's reads: tasks, step trees, hypotheses, artifacts, strategies."""
        ...

    @property
    def knowledge(self) -> KnowledgeStore:
        """Knowledge sources: live sources of a collection, one source's Markdown, collection counts."""
        ...

    # --- writes -------------------------------------------------------------------------
    def write(self, batch: WriteBatch) -> None: ...

    def record_access(self, scope: Scope, memory_ids: Sequence[str], at: datetime) -> int:
        """Count a use of each memory of ``scope`` named; returns how many were counted."""
        ...

    def purge(self, scope: Scope, memory_ids: Sequence[str], *, keep_embeddings: bool = False) -> int:
        """Hard delete. ``keep_embeddings`` keeps the cached vectors of the texts (a rebuild from files that
        still hold them); otherwise nothing of the texts remains."""
        ...

    def reset(self) -> None: ...

    def erase_scope(self, scope: Scope) -> dict[str, int]:
        """Delete every row about ``scope`` (memories, vectors, keyword entries, raw turns, history, jobs,
        key-value facts, graph) and the cached embeddings of every text it ever had, then leave no copy in
        the backend's indexes and logs (see :meth:`find_traces`). Returns rows deleted per table."""
        ...

    def find_traces(self, needles: Sequence[str]) -> dict[str, list[str]]:
        """Where each string still appears in the stored data, for the strings found (empty: none).
        SQLite scans its files (main database and WAL) and the keyword index; PostgreSQL every text
        column of every table (a deleted row's bytes stay in its table file until VACUUM reuses them)."""
        ...

    def texts_held(self, needles: Sequence[str]) -> set[str]:
        """The strings that a live memory or raw turn of any scope still contains (after an erase: someone
        else's copy of the same words, which the erasure proof must not count)."""
        ...

    def compact(self) -> None:
        """Rewrite the database so freed space holds no old bytes (SQLite VACUUM; PostgreSQL VACUUM)."""
        ...

    def count_scope_rows(self, scope: Scope) -> dict[str, int]:
        """Rows per table that still mention ``scope``: the proof that an erase left nothing."""
        ...

    # --- reads --------------------------------------------------------------------------
    def get(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]: ...

    def list_memories(self, query: ListQuery) -> list[MemoryItem]: ...

    def count(self, scope: Scope, filters: Filters) -> int: ...

    def scan_memories(self, filters: Filters, after: int, limit: int) -> list[tuple[int, MemoryItem]]:
        """Every tenant and scope, in storage order after the cursor ``after`` (0 to start): for
        maintenance jobs, never for user-facing reads. Returns (cursor, memory) pairs."""
        ...

    def find_by_key(self, scope: Scope, key: str, *, exact: bool = False) -> MemoryItem | None:
        """The current value of ``key`` visible to ``scope``: the one exactly this scope holds, else the latest
        updated of the narrower scopes' (its sessions'); with ``exact``, only the scope's own (what a write of
        the key replaces: a session's own value of a key is not its user's)."""
        ...

    def find_by_hash(
        self, scope: Scope, content_hash: str, statuses: Sequence[MemoryStatus] = (MemoryStatus.ACTIVE,)
    ) -> list[MemoryItem]:
        """Memories of ``scope`` with this content hash and one of ``statuses`` (default: active only)."""
        ...

    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]: ...

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]: ...

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEvent]: ...

    def messages(self, scope: Scope, limit: int = 1000, *, latest: bool = False) -> list[StoredMessage]:
        """Raw turns of ``scope``, oldest first: the first ``limit`` of them, or with ``latest`` the last ``limit``."""
        ...

    def messages_by_id(self, scope: Scope, message_ids: Sequence[str]) -> list[StoredMessage]: ...

    def messages_said_at(self, scope: Scope, timestamps: Sequence[datetime]) -> list[StoredMessage]:
        """Raw turns of exactly ``scope`` (not of its agents or sessions) said at one of ``timestamps``, oldest
        stored first."""
        ...

    # --- graph --------------------------------------------------------------------------
    def graph_entities(self, scope: Scope, entity_ids: Sequence[str] | None = None) -> list[Entity]:
        """Entities visible to ``scope``: all live ones, or those with the given ids (merged ones included)."""
        ...

    def entity_vectors(self, scope: Scope, embedding_id: str) -> dict[str, Vector]: ...

    def graph_relations(
        self,
        scope: Scope,
        *,
        entity_ids: Sequence[str] | None = None,
        relation_ids: Sequence[str] | None = None,
        include_closed: bool = False,
    ) -> list[Relation]:
        """Relations visible to ``scope`` touching any of ``entity_ids`` (either end), or with the given ids,
        or all; current ones only unless ``include_closed``."""
        ...

    def graph_walk(
        self, scope: Scope, start_ids: Sequence[str], hops: int, *, include_closed: bool = False
    ) -> list[tuple[Relation, int]]:
        """Every relation within ``hops`` of the start entities, walking edges in both directions, with the hop
        (1 = touches a start entity) at which it is first reached. One indexed query per hop."""
        ...

    # --- jobs ---------------------------------------------------------------------------
    def claim_jobs(self, now: datetime, lease_until: datetime, limit: int) -> list[Job]:
        """Atomically claim queued jobs (or running ones whose lease expired) of one scope, oldest first."""
        ...

    def list_jobs(self, scope: AdminScope | None, statuses: Sequence[JobStatus], limit: int) -> list[Job]: ...

    # --- embeddings ---------------------------------------------------------------------
    def embedding_id(self) -> str | None: ...

    def cached_vectors(self, embedding_id: str, text_hashes: Sequence[str]) -> dict[str, Vector]: ...

    def set_embedding_id(self, embedding_id: str) -> None:
        """Switch the store to another embedding model; vectors of the old one stop being searched."""
        ...

    def memories_needing_vectors(self, embedding_id: str, batch_size: int) -> Iterator[list[MemoryItem]]:
        """Memories with no vector of ``embedding_id`` yet, in batches (drives reindex and repair)."""
        ...

    def keyword_index_current(self) -> bool:
        """True when every memory's keyword terms and stored readings come from this version's word tables."""
        ...

    def rebuild_keyword_index(self, batch_size: int = 2000) -> Iterator[int]:
        """Derive every memory's keyword terms and stored readings again, a batch per transaction; yields rows done
        per batch."""
        ...

    # --- whole-store --------------------------------------------------------------------
    def export_all(self) -> Iterator[tuple[str, object]]: ...

    def stats(self, scope: AdminScope | None = None) -> StoreStats: ...

    def close(self) -> None: ...
