"""Graph rows shared by the backends: the column order, and rows back into records.

The backends differ only in how a stored value comes back (SQLite: JSON text and ISO strings; PostgreSQL:
decoded JSON and datetimes), so each passes its two decoders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memstrata.graph.model import Entity, Relation
from memstrata.types import Scope

ENTITY_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, name, type, aliases, message_ids, metadata, merged_into, "
    "created_at, updated_at"
)
RELATION_COLUMNS = (
    "id, tenant_id, user_id, agent_id, session_id, source_id, relation, target_id, confidence, event_time, "
    "valid_from, valid_to, message_ids, memory_ids, metadata, created_at, updated_at"
)


def prefixed(columns: str, alias: str) -> str:
    return ", ".join(f"{alias}.{column.strip()}" for column in columns.split(","))


@dataclass(frozen=True)
class Decoders:
    json: Callable[[Any], Any]
    time: Callable[[Any], datetime | None]

    def required_time(self, value: Any) -> datetime:
        moment = self.time(value)
        if moment is None:
            raise ValueError("a NOT NULL timestamp column came back empty")
        return moment


def _scope(tenant_id: str, user_id: str, agent_id: str, session_id: str) -> Scope:
    return Scope(
        tenant_id=tenant_id or None, user_id=user_id or None, agent_id=agent_id or None, session_id=session_id or None
    )


def entity_from_row(row: Sequence[Any], decode: Decoders) -> Entity:
    entity_id, tenant, user, agent, session, name, kind, aliases, message_ids, metadata, merged, created, updated = row
    return Entity.model_construct(  # validated on the way in
        id=entity_id,
        scope=_scope(tenant, user, agent, session),
        name=name,
        type=kind,
        aliases=tuple(decode.json(aliases)),
        message_ids=tuple(decode.json(message_ids)),
        metadata=decode.json(metadata),
        merged_into=merged,
        created_at=decode.required_time(created),
        updated_at=decode.required_time(updated),
    )


def relation_from_row(row: Sequence[Any], decode: Decoders) -> Relation:
    (
        relation_id, tenant, user, agent, session, source_id, name, target_id, confidence, event_time, valid_from,
        valid_to, message_ids, memory_ids, metadata, created, updated,
    ) = row  # fmt: skip
    return Relation.model_construct(
        id=relation_id,
        scope=_scope(tenant, user, agent, session),
        source_id=source_id,
        relation=name,
        target_id=target_id,
        confidence=confidence,
        event_time=decode.time(event_time),
        valid_from=decode.required_time(valid_from),
        valid_to=decode.time(valid_to),
        message_ids=tuple(decode.json(message_ids)),
        memory_ids=tuple(decode.json(memory_ids)),
        metadata=decode.json(metadata),
        created_at=decode.required_time(created),
        updated_at=decode.required_time(updated),
    )
