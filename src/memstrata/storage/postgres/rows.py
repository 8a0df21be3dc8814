"""Conversions between PostgreSQL rows and memstrata's typed records, and keyword-index literals."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from memstrata.graph.model import Entity, Relation
from memstrata.indexing import content_hash, index_text
from memstrata.lexical import index_document
from memstrata.storage.graph_rows import Decoders, entity_from_row, relation_from_row
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
    as_utc,
)

MEMORY_FIELDS = [
    "id",
    "tenant_id",
    "user_id",
    "agent_id",
    "session_id",
    "kind",
    "text",
    "key",
    "metadata",
    "confidence",
    "status",
    "event_time",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "recorded_to",
    "last_accessed_at",
    "access_count",
    "provenance",
    "embedding_id",
]
MEMORY_COLUMNS = ", ".join(f"m.{name}" for name in MEMORY_FIELDS)  # queries alias memories as m
HISTORY_COLUMNS = (
    "id, memory_id, tenant_id, user_id, agent_id, session_id, action, old_text, new_text, actor, reason, "
    "created_at, details"
)
MESSAGE_COLUMNS = "seq, id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp"
JOB_COLUMNS = (
    "id, kind, tenant_id, user_id, agent_id, session_id, status, message_ids, attempts, lease_until, error, "
    "raw_output, result, created_at, updated_at"
)

_MAX_LEXEME_BYTES = 2046  # PostgreSQL's limit for one tsvector lexeme
_MAX_POSITION = 16383
_MAX_POSITIONS = 256


def utc(value: datetime | None) -> datetime | None:
    return None if value is None else as_utc(value)


def utc_required(value: datetime) -> datetime:
    return as_utc(value)


_DECODE = Decoders(json=lambda value: value, time=utc)  # psycopg hands JSON and timestamps back decoded


def scope_columns(scope: Scope) -> tuple[str, str, str, str]:
    """(tenant_id, user_id, agent_id, session_id), '' for an absent field."""
    return (scope.tenant_id or "", scope.user_id or "", scope.agent_id or "", scope.session_id or "")


def scope_from(tenant_id: str, user_id: str, agent_id: str, session_id: str) -> Scope:
    return Scope(
        tenant_id=tenant_id or None, user_id=user_id or None, agent_id=agent_id or None, session_id=session_id or None
    )


def quote_lexeme(token: str) -> str:
    """A lexeme quoted for tsvector/tsquery input: user text is always a literal, never syntax."""
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(document: str) -> str:
    """The tsvector of a pre-segmented token string, token for token (no second tokenizer).

    Positions are kept so ts_rank_cd can rank; tokens PostgreSQL cannot hold (over 2 KB) are skipped.
    """
    positions: dict[str, list[int]] = {}
    for position, token in enumerate(document.split(), start=1):
        if len(token.encode("utf-8")) <= _MAX_LEXEME_BYTES:
            spots = positions.setdefault(token, [])
            if len(spots) < _MAX_POSITIONS:
                spots.append(min(position, _MAX_POSITION))
    return " ".join(f"{quote_lexeme(token)}:{','.join(map(str, spots))}" for token, spots in positions.items())


def tsquery_literal(tokens: list[str]) -> str:
    """Tokens OR-ed, each quoted: the same semantics as the FTS5 MATCH the SQLite store builds."""
    usable = [token for token in tokens if token and len(token.encode("utf-8")) <= _MAX_LEXEME_BYTES]
    return " | ".join(quote_lexeme(token) for token in usable)


def memory_tokens(item: MemoryItem) -> str:
    return tsvector_literal(index_document(index_text(item)))


def memory_params(item: MemoryItem) -> dict[str, Any]:
    tenant_id, user_id, agent_id, session_id = scope_columns(item.scope)
    return {
        "id": item.id,
        "tenant_id": tenant_id,
        "user_id": user_id,
        "agent_id": agent_id,
        "session_id": session_id,
        "kind": item.kind,
        "text": item.text,
        "key": item.key,
        "metadata": Jsonb(item.metadata),
        "confidence": item.confidence,
        "status": item.status.value,
        "event_time": item.event_time,
        "created_at": item.created_at,
        "updated_at": item.updated_at,
        "valid_from": item.valid_from,
        "valid_to": item.valid_to,
        "recorded_to": item.recorded_to,
        "last_accessed_at": item.last_accessed_at,
        "access_count": item.access_count,
        "provenance": Jsonb(item.provenance.model_dump(mode="json")),
        "embedding_id": item.embedding_id,
        "content_hash": content_hash(item.text),
        "tokens": memory_tokens(item),
    }


def row_to_memory(row: tuple[Any, ...]) -> MemoryItem:
    (
        memory_id, tenant_id, user_id, agent_id, session_id, kind, text, key, metadata, confidence, status,
        event_time, created_at, updated_at, valid_from, valid_to, recorded_to, last_accessed_at, access_count,
        provenance, embedding_id,
    ) = row  # fmt: skip
    return MemoryItem.model_construct(  # rows were validated on the way in
        id=memory_id,
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        kind=kind,
        text=text,
        key=key,
        metadata=metadata,
        confidence=confidence,
        status=MemoryStatus(status),
        event_time=utc(event_time),
        created_at=utc_required(created_at),
        updated_at=utc_required(updated_at),
        valid_from=utc_required(valid_from),
        valid_to=utc(valid_to),
        recorded_to=utc(recorded_to),
        last_accessed_at=utc(last_accessed_at),
        access_count=access_count,
        provenance=Provenance.model_validate(provenance),
        embedding_id=embedding_id,
    )


def history_params(event: HistoryEvent) -> tuple[Any, ...]:
    return (
        event.id,
        event.memory_id,
        *scope_columns(event.scope),
        event.action.value,
        event.old_text,
        event.new_text,
        event.actor,
        event.reason,
        event.created_at,
        Jsonb(event.details),
    )


def row_to_history(row: tuple[Any, ...]) -> HistoryEvent:
    (
        event_id, memory_id, tenant_id, user_id, agent_id, session_id, action, old_text, new_text, actor, reason,
        created_at, details,
    ) = row  # fmt: skip
    return HistoryEvent(
        id=event_id,
        memory_id=memory_id,
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        action=HistoryAction(action),
        old_text=old_text,
        new_text=new_text,
        actor=actor,
        reason=reason,
        created_at=created_at,
        details=details,
    )


def message_params(message: Message, scope: Scope, stored_at: datetime) -> tuple[Any, ...]:
    return (
        message.id,
        *scope_columns(scope),
        message.role,
        message.name,
        message.content,
        message.timestamp,
        stored_at,
    )


def row_to_message(row: tuple[Any, ...]) -> StoredMessage:
    seq, message_id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp = row
    return StoredMessage(
        message=Message(id=message_id, role=role, name=name, content=content, timestamp=timestamp),
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        seq=seq,
    )


def no_nul(value: str | None) -> str | None:
    """Model output may hold NUL, which PostgreSQL text cannot; keep everything else verbatim."""
    return None if value is None else value.replace("\x00", "\ufffd")


def scrubbed(value: Any) -> Any:
    """A JSON value with NUL removed from every string (JSONB cannot hold \\u0000)."""
    if isinstance(value, str):
        return no_nul(value)
    if isinstance(value, dict):
        return {no_nul(str(key)): scrubbed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrubbed(item) for item in value]
    return value


def job_params(job: Job) -> tuple[Any, ...]:
    return (
        job.id,
        job.kind,
        *scope_columns(job.scope),
        job.status.value,
        Jsonb(list(job.message_ids)),
        job.attempts,
        job.lease_until,
        no_nul(job.error),
        no_nul(job.raw_output),
        Jsonb(scrubbed(job.result)),
        job.created_at,
        job.updated_at,
    )


def row_to_job(row: tuple[Any, ...]) -> Job:
    (
        job_id, kind, tenant_id, user_id, agent_id, session_id, status, message_ids, attempts, lease_until, error,
        raw_output, result, created_at, updated_at,
    ) = row  # fmt: skip
    return Job(
        id=job_id,
        kind=kind,
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        status=JobStatus(status),
        message_ids=tuple(message_ids),
        attempts=attempts,
        lease_until=lease_until,
        error=error,
        raw_output=raw_output,
        result=result or {},
        created_at=created_at,
        updated_at=updated_at,
    )


# Graph rows come from model output, like job results: NUL is scrubbed rather than refused.
def entity_params(entity: Entity) -> tuple[Any, ...]:
    return (
        entity.id,
        *scope_columns(entity.scope),
        no_nul(entity.name),
        entity.type,
        Jsonb(scrubbed(entity.aliases)),
        Jsonb(scrubbed(entity.message_ids)),
        Jsonb(scrubbed(entity.metadata)),
        entity.merged_into,
        entity.created_at,
        entity.updated_at,
    )


def row_to_entity(row: tuple[Any, ...]) -> Entity:
    return entity_from_row(row, _DECODE)


def relation_params(relation: Relation) -> tuple[Any, ...]:
    return (
        relation.id,
        *scope_columns(relation.scope),
        relation.source_id,
        relation.relation,
        relation.target_id,
        relation.confidence,
        relation.event_time,
        relation.valid_from,
        relation.valid_to,
        Jsonb(scrubbed(relation.message_ids)),
        Jsonb(scrubbed(relation.memory_ids)),
        Jsonb(scrubbed(relation.metadata)),
        relation.created_at,
        relation.updated_at,
    )


def row_to_relation(row: tuple[Any, ...]) -> Relation:
    return relation_from_row(row, _DECODE)
