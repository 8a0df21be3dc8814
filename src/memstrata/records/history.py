"""The history event of a change to a memory: what every write path records beside the change."""

from __future__ import annotations

from datetime import datetime

from memstrata.types import HistoryAction, HistoryEvent, JsonDict, MemoryItem, new_id


def history_event(
    item: MemoryItem,
    action: HistoryAction,
    *,
    at: datetime,
    actor: str,
    old_text: str | None = None,
    reason: str | None = None,
    details: JsonDict | None = None,
) -> HistoryEvent:
    new_text = None if action == HistoryAction.DELETE else item.text
    if action == HistoryAction.DELETE:
        old_text = item.text
    return HistoryEvent(
        id=new_id(),
        memory_id=item.id,
        scope=item.scope,
        action=action,
        old_text=old_text,
        new_text=new_text,
        actor=actor,
        reason=reason,
        created_at=at,
        details=details or {"message_ids": list(item.provenance.message_ids)},
    )
