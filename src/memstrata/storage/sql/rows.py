"""Rows <-> memstrata's records, once for every backend: the dialect converts each value."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from memstrata.indexing import content_hash
from memstrata.records.graph import Entity, Relation
from memstrata.storage.sql.dialect import Dialect
from memstrata.stored_words import remember as remember_words
from memstrata.stored_words import stored_words
from memstrata.types import (
    HistoryAction,
    HistoryEvent,
    Job,
    JobStatus,
    MemoryItem,
    MemoryStatus,
    Message,
    Provenance,
    Scope,
    StoredMessage,
)

SCOPE_COLUMNS = ("tenant_id", "user_id", "agent_id", "session_id")
_MEMORY = (
    "id", *SCOPE_COLUMNS, "kind", "text", "key", "metadata", "confidence", "status", "event_time", "created_at",
    "updated_at", "valid_from", "valid_to", "recorded_to", "last_accessed_at", "access_count", "provenance",
    "embedding_id", "words",
)  # fmt: skip
MEMORY_COLUMNS = ", ".join(f"m.{name}" for name in _MEMORY)  # queries alias memories as m
MEMORY_WRITE_COLUMNS = (*_MEMORY, "content_hash")  # what memory_params() fills, in this order
HISTORY_COLUMNS = (
    "id, memory_id, tenant_id, user_id, agent_id, session_id, action, old_text, new_text, actor, reason, "
    "created_at, details"
)
MESSAGE_COLUMNS = "seq, id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp, stored_at"
MESSAGE_WRITE_COLUMNS = "id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp, stored_at"
JOB_COLUMNS = (
    "id, kind, tenant_id, user_id, agent_id, session_id, status, message_ids, attempts, lease_until, error, "
    "raw_output, result, created_at, updated_at"
)
ENTITY_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, name, type, aliases, message_ids, metadata, merged_into, "
    "created_at, updated_at"
)
RELATION_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, source_id, relation, target_id, confidence, event_time, "
    "valid_from, valid_to, message_ids, memory_ids, metadata, created_at, updated_at"
)


def names(columns: str) -> list[str]:
    return [column.strip() for column in columns.split(",")]


def marks(count: int) -> str:
    return ", ".join("?" * count)


def prefixed(columns: str, alias: str) -> str:
    return ", ".join(f"{alias}.{column}" for column in names(columns))


def scope_columns(scope: Scope) -> tuple[str, str, str, str]:
    """(tenant_id, user_id, agent_id, session_id): '' for an absent field, so equality and indexes stay simple."""
    return (scope.tenant_id or "", scope.user_id or "", scope.agent_id or "", scope.session_id or "")


@lru_cache(maxsize=4096)  # Scope is immutable: the rows of one scope (a search reads dozens) share one object
def scope_from(tenant_id: str, user_id: str, agent_id: str, session_id: str) -> Scope:
    return Scope(
        tenant_id=tenant_id or None, user_id=user_id or None, agent_id=agent_id or None, session_id=session_id or None
    )


def _required(d: Dialect, value: Any) -> datetime:
    moment = d.time(value)
    if moment is None:
        raise ValueError("a NOT NULL timestamp column came back empty")
    return moment


def memory_params(d: Dialect, item: MemoryItem) -> tuple[Any, ...]:
    # A provenance is stored without its defaults: an API add's is "{}", not 68 bytes of nulls and empty lists.
    provenance = item.provenance.model_dump(mode="json", exclude_defaults=True)
    return (
        item.id, *scope_columns(item.scope), item.kind, item.text, item.key, d.json(item.metadata),
        item.confidence, item.status.value, d.ts(item.event_time), d.ts(item.created_at), d.ts(item.updated_at),
        d.ts(item.valid_from), d.ts(item.valid_to), d.ts(item.recorded_to), d.ts(item.last_accessed_at),
        item.access_count, d.json(provenance), item.embedding_id, stored_words(item.text), content_hash(item.text),
    )  # fmt: skip


def memory(d: Dialect, row: Sequence[Any]) -> MemoryItem:
    (
        memory_id, tenant, user, agent, session, kind, text, key, metadata, confidence, status, event_time,
        created_at, updated_at, valid_from, valid_to, recorded_to, last_accessed_at, access_count, provenance,
        embedding_id, words,
    ) = row  # fmt: skip
    remember_words(text, words)  # what ranking reads of the text, read when it was written (stored_words.py)
    return MemoryItem.model_construct(  # rows were validated on the way in
        id=memory_id, scope=scope_from(tenant, user, agent, session), kind=kind, text=text, key=key,
        metadata=d.from_json(metadata), confidence=confidence, status=MemoryStatus(status),
        event_time=d.time(event_time), created_at=_required(d, created_at), updated_at=_required(d, updated_at),
        valid_from=_required(d, valid_from), valid_to=d.time(valid_to), recorded_to=d.time(recorded_to),
        last_accessed_at=d.time(last_accessed_at), access_count=access_count,
        provenance=_provenance(d, provenance), embedding_id=embedding_id,
    )  # fmt: skip


def _provenance(d: Dialect, value: Any) -> Provenance:
    return _provenance_text(value) if isinstance(value, str) else Provenance.model_validate(d.from_json(value))


@lru_cache(maxsize=4096)  # most memories share a few provenances ("api", one document); Provenance is immutable
def _provenance_text(text: str) -> Provenance:
    return Provenance.model_validate_json(text)


def history_params(d: Dialect, event: HistoryEvent) -> tuple[Any, ...]:
    return (
        event.id, event.memory_id, *scope_columns(event.scope), event.action.value, event.old_text, event.new_text,
        event.actor, event.reason, d.ts(event.created_at), d.json(event.details),
    )  # fmt: skip


def history(d: Dialect, row: Sequence[Any]) -> HistoryEvent:
    event_id, memory_id, tenant, user, agent, session, action, old, new, actor, reason, created, details = row
    return HistoryEvent(
        id=event_id, memory_id=memory_id, scope=scope_from(tenant, user, agent, session),
        action=HistoryAction(action), old_text=old, new_text=new, actor=actor, reason=reason,
        created_at=_required(d, created), details=d.from_json(details),
    )  # fmt: skip


def message_params(d: Dialect, message: Message, scope: Scope, stored_at: datetime) -> tuple[Any, ...]:
    return (
        message.id, *scope_columns(scope), message.role, message.name, message.content, d.ts(message.timestamp),
        d.ts(stored_at),
    )  # fmt: skip


def message(d: Dialect, row: Sequence[Any]) -> StoredMessage:
    seq, message_id, tenant, user, agent, session, role, name, content, timestamp, stored_at = row
    turn = Message(id=message_id, role=role, name=name, content=content, timestamp=_required(d, timestamp))
    return StoredMessage(message=turn, scope=scope_from(tenant, user, agent, session), seq=seq,
                         stored_at=d.time(stored_at))  # fmt: skip


def job_params(d: Dialect, job: Job) -> tuple[Any, ...]:
    return (
        job.id, job.kind, *scope_columns(job.scope), job.status.value, d.json(list(job.message_ids)), job.attempts,
        d.ts(job.lease_until), d.model_text(job.error), d.model_text(job.raw_output), d.model_json(job.result),
        d.ts(job.created_at), d.ts(job.updated_at),
    )  # fmt: skip


def job(d: Dialect, row: Sequence[Any]) -> Job:
    (
        job_id, kind, tenant, user, agent, session, status, message_ids, attempts, lease_until, error, raw_output,
        result, created_at, updated_at,
    ) = row  # fmt: skip
    return Job(
        id=job_id, kind=kind, scope=scope_from(tenant, user, agent, session), status=JobStatus(status),
        message_ids=tuple(d.from_json(message_ids)), attempts=attempts, lease_until=d.time(lease_until),
        error=error, raw_output=raw_output, result=d.from_json(result) or {}, created_at=_required(d, created_at),
        updated_at=_required(d, updated_at),
    )  # fmt: skip


# Graph rows come from model output, like job results: what the database cannot hold is scrubbed, not refused.
def entity_params(d: Dialect, entity: Entity) -> tuple[Any, ...]:
    return (
        entity.id, *scope_columns(entity.scope), d.model_text(entity.name), entity.type,
        d.model_json(list(entity.aliases)), d.model_json(list(entity.message_ids)), d.model_json(entity.metadata),
        entity.merged_into, d.ts(entity.created_at), d.ts(entity.updated_at),
    )  # fmt: skip


def entity(d: Dialect, row: Sequence[Any]) -> Entity:
    entity_id, tenant, user, agent, session, name, kind, aliases, message_ids, metadata, merged, created, updated = row
    return Entity.model_construct(  # validated on the way in
        id=entity_id, scope=scope_from(tenant, user, agent, session), name=name, type=kind,
        aliases=tuple(d.from_json(aliases)), message_ids=tuple(d.from_json(message_ids)),
        metadata=d.from_json(metadata), merged_into=merged, created_at=_required(d, created),
        updated_at=_required(d, updated),
    )  # fmt: skip


def relation_params(d: Dialect, relation: Relation) -> tuple[Any, ...]:
    return (
        relation.id, *scope_columns(relation.scope), relation.source_id, relation.relation, relation.target_id,
        relation.confidence, d.ts(relation.event_time), d.ts(relation.valid_from), d.ts(relation.valid_to),
        d.model_json(list(relation.message_ids)), d.model_json(list(relation.memory_ids)),
        d.model_json(relation.metadata), d.ts(relation.created_at), d.ts(relation.updated_at),
    )  # fmt: skip


def relation(d: Dialect, row: Sequence[Any]) -> Relation:
    (
        relation_id, tenant, user, agent, session, source_id, name, target_id, confidence, event_time, valid_from,
        valid_to, message_ids, memory_ids, metadata, created, updated,
    ) = row  # fmt: skip
    return Relation.model_construct(
        id=relation_id, scope=scope_from(tenant, user, agent, session), source_id=source_id, relation=name,
        target_id=target_id, confidence=confidence, event_time=d.time(event_time),
        valid_from=_required(d, valid_from), valid_to=d.time(valid_to),
        message_ids=tuple(d.from_json(message_ids)), memory_ids=tuple(d.from_json(memory_ids)),
        metadata=d.from_json(metadata), created_at=_required(d, created), updated_at=_required(d, updated),
    )  # fmt: skip
