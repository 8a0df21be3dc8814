"""Turn resolved decisions into one WriteBatch: new memories, superseded versions, deletions, history.

An UPDATE never overwrites: the old memory is closed (status superseded, valid_to set) and a new
version is inserted that points back at it, so the change stays visible in history and as_of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memstrata.storage.protocol import StatusChange, WriteBatch
from memstrata.types import HistoryAction, JsonDict, MemoryItem, MemoryStatus, Provenance, Scope, as_utc
from memstrata.write.decisions import Add, Delete, NewFact, Noop, Resolved, Update
from memstrata.write.ingest import history_event, new_memory


@dataclass(frozen=True)
class PlannedWrites:
    batch: WriteBatch
    new_items: list[MemoryItem]  # need vectors before the batch is written
    summary: list[JsonDict]  # one entry per decision, for the job result


def _event_time(fact: NewFact) -> datetime | None:
    if not fact.event_time:
        return None
    try:
        return as_utc(datetime.fromisoformat(fact.event_time))
    except ValueError:
        return None  # an unparseable date from a model is dropped, the fact is kept


def _memory_for(fact: NewFact, scope: Scope, now: datetime, actor: str, extra: JsonDict) -> MemoryItem:
    return new_memory(
        scope,
        fact.text,
        now=now,
        kind=fact.kind,
        metadata={"extracted_by": actor, **extra},
        provenance=Provenance(source="messages", message_ids=fact.message_ids),
        confidence=fact.confidence,
        event_time=_event_time(fact),
    )


def plan_writes(resolved: Sequence[Resolved], scope: Scope, now: datetime, actor: str) -> PlannedWrites:
    inserts: list[MemoryItem] = []
    changes: list[StatusChange] = []
    history = []
    summary: list[JsonDict] = []
    for decision in resolved:
        details = {"message_ids": list(decision.fact.message_ids)}
        match decision:
            case Add(fact=fact, defaulted=defaulted):
                item = _memory_for(fact, scope, now, actor, {})
                inserts.append(item)
                reason = "extracted; the model gave no decision, kept" if defaulted else "extracted"
                history.append(history_event(item, HistoryAction.ADD, at=now, actor=actor, reason=reason))
                summary.append({"action": "ADD", "id": item.id, "text": item.text, "defaulted": defaulted})
            case Update(fact=fact, target=target, text=text):
                merged = NewFact(
                    text,
                    fact.kind,
                    fact.confidence,
                    tuple(dict.fromkeys(target.provenance.message_ids + fact.message_ids)),
                )
                item = _memory_for(merged, scope, now, actor, {"supersedes": target.id})
                inserts.append(item)
                changes.append(StatusChange(target.id, target.scope, MemoryStatus.SUPERSEDED, now))
                history.append(
                    history_event(
                        item,
                        HistoryAction.UPDATE,
                        at=now,
                        actor=actor,
                        old_text=target.text,
                        reason=f"supersedes {target.id}",
                        details={**details, "supersedes": target.id},
                    )
                )
                summary.append(
                    {"action": "UPDATE", "id": item.id, "supersedes": target.id, "old": target.text, "text": text}
                )
            case Delete(fact=fact, target=target):
                changes.append(StatusChange(target.id, target.scope, MemoryStatus.DELETED, now))
                history.append(
                    history_event(
                        target,
                        HistoryAction.DELETE,
                        at=now,
                        actor=actor,
                        reason=f"contradicted by: {fact.text}",
                        details=details,
                    )
                )
                summary.append({"action": "DELETE", "id": target.id, "old": target.text, "because": fact.text})
            case Noop(fact=fact, target=target, reason=reason):
                summary.append(
                    {"action": "NONE", "id": target.id if target else None, "text": fact.text, "reason": reason}
                )
    batch = WriteBatch(inserts=inserts, status_changes=changes, history=history)
    return PlannedWrites(batch=batch, new_items=inserts, summary=summary)
