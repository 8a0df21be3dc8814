"""Conversions between SQLite rows and memstrata's typed records."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

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

_MEMORY_FIELDS = [
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
MEMORY_COLUMNS = ", ".join(f"m.{name}" for name in _MEMORY_FIELDS)  # queries alias memories as m


def ts(value: datetime | None) -> str | None:
    """Timestamps are stored as fixed-width UTC ISO strings so text comparison orders them."""
    return None if value is None else as_utc(value).isoformat(timespec="microseconds")


def parse_ts(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def parse_required_ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


def scope_columns(scope: Scope) -> tuple[str, str, str, str]:
    """(tenant_id, user_id, agent_id, session_id), '' for an absent field."""
    return (scope.tenant_id or "", scope.user_id or "", scope.agent_id or "", scope.session_id or "")


def scope_from(tenant_id: str, user_id: str, agent_id: str, session_id: str) -> Scope:
    return Scope(
        tenant_id=tenant_id or None, user_id=user_id or None, agent_id=agent_id or None, session_id=session_id or None
    )


def memory_to_row(item: MemoryItem, content_hash: str) -> dict[str, Any]:
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
        "metadata": json.dumps(item.metadata, ensure_ascii=False, sort_keys=True),
        "confidence": item.confidence,
        "status": item.status.value,
        "event_time": ts(item.event_time),
        "created_at": ts(item.created_at),
        "updated_at": ts(item.updated_at),
        "valid_from": ts(item.valid_from),
        "valid_to": ts(item.valid_to),
        "recorded_to": ts(item.recorded_to),
        "last_accessed_at": ts(item.last_accessed_at),
        "access_count": item.access_count,
        "provenance": item.provenance.model_dump_json(),
        "embedding_id": item.embedding_id,
        "content_hash": content_hash,
    }


def row_to_memory(row: sqlite3.Row | tuple[Any, ...]) -> MemoryItem:
    (
        memory_id,
        tenant_id,
        user_id,
        agent_id,
        session_id,
        kind,
        text,
        key,
        metadata,
        confidence,
        status,
        event_time,
        created_at,
        updated_at,
        valid_from,
        valid_to,
        recorded_to,
        last_accessed_at,
        access_count,
        provenance,
        embedding_id,
    ) = tuple(row)
    return MemoryItem.model_construct(  # rows were validated on the way in
        id=memory_id,
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        kind=kind,
        text=text,
        key=key,
        metadata=json.loads(metadata),
        confidence=confidence,
        status=MemoryStatus(status),
        event_time=parse_ts(event_time),
        created_at=parse_required_ts(created_at),
        updated_at=parse_required_ts(updated_at),
        valid_from=parse_required_ts(valid_from),
        valid_to=parse_ts(valid_to),
        recorded_to=parse_ts(recorded_to),
        last_accessed_at=parse_ts(last_accessed_at),
        access_count=access_count,
        provenance=Provenance.model_validate_json(provenance),
        embedding_id=embedding_id,
    )


HISTORY_COLUMNS = (
    "id, memory_id, tenant_id, user_id, agent_id, session_id, action, old_text, new_text, actor, reason, "
    "created_at, details"
)


def history_to_row(event: HistoryEvent) -> tuple[Any, ...]:
    return (
        event.id,
        event.memory_id,
        *scope_columns(event.scope),
        event.action.value,
        event.old_text,
        event.new_text,
        event.actor,
        event.reason,
        ts(event.created_at),
        json.dumps(event.details, ensure_ascii=False, sort_keys=True),
    )


def row_to_history(row: tuple[Any, ...]) -> HistoryEvent:
    (
        event_id,
        memory_id,
        tenant_id,
        user_id,
        agent_id,
        session_id,
        action,
        old_text,
        new_text,
        actor,
        reason,
        created_at,
        details,
    ) = row
    return HistoryEvent(
        id=event_id,
        memory_id=memory_id,
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        action=HistoryAction(action),
        old_text=old_text,
        new_text=new_text,
        actor=actor,
        reason=reason,
        created_at=datetime.fromisoformat(created_at),
        details=json.loads(details),
    )


MESSAGE_COLUMNS = "seq, id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp"


def message_to_row(message: Message, scope: Scope, stored_at: datetime) -> tuple[Any, ...]:
    return (
        message.id,
        *scope_columns(scope),
        message.role,
        message.name,
        message.content,
        ts(message.timestamp),
        ts(stored_at),
    )


def row_to_message(row: tuple[Any, ...]) -> StoredMessage:
    seq, message_id, tenant_id, user_id, agent_id, session_id, role, name, content, timestamp = row
    return StoredMessage(
        message=Message(
            id=message_id, role=role, name=name, content=content, timestamp=datetime.fromisoformat(timestamp)
        ),
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        seq=seq,
    )


JOB_COLUMNS = (
    "id, kind, tenant_id, user_id, agent_id, session_id, status, message_ids, attempts, lease_until, error, "
    "raw_output, result, created_at, updated_at"
)


def job_to_row(job: Job) -> tuple[Any, ...]:
    return (
        job.id,
        job.kind,
        *scope_columns(job.scope),
        job.status.value,
        json.dumps(list(job.message_ids)),
        job.attempts,
        ts(job.lease_until),
        job.error,
        job.raw_output,
        json.dumps(job.result, ensure_ascii=False),
        ts(job.created_at),
        ts(job.updated_at),
    )


def row_to_job(row: tuple[Any, ...]) -> Job:
    (
        job_id,
        kind,
        tenant_id,
        user_id,
        agent_id,
        session_id,
        status,
        message_ids,
        attempts,
        lease_until,
        error,
        raw_output,
        result,
        created_at,
        updated_at,
    ) = row
    return Job(
        id=job_id,
        kind=kind,
        scope=scope_from(tenant_id, user_id, agent_id, session_id),
        status=JobStatus(status),
        message_ids=tuple(json.loads(message_ids)),
        attempts=attempts,
        lease_until=parse_ts(lease_until),
        error=error,
        raw_output=raw_output,
        result=json.loads(result or "{}"),
        created_at=parse_required_ts(created_at),
        updated_at=parse_required_ts(updated_at),
    )
