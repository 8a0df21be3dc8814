"""Turn resolved decisions into one WriteBatch: new memories, superseded versions, deletions, history.

- An UPDATE never overwrites: the old memory is closed (status superseded, valid_to set) and a new
  version points back at it, so the change stays visible in history and to as_of.
- Conflicts resolve by event time: if the "new" fact describes an earlier event than the memory it
  would replace, it is stored as a closed historical version and the current memory stays.
- Facts below the confidence gate go in as pending; a pending memory that is said again gains
  confidence and is promoted once it clears the gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstrata.storage.protocol import StatusChange, WriteBatch
from memstrata.types import (
    HistoryAction,
    HistoryEvent,
    JsonDict,
    MemoryItem,
    MemoryStatus,
    Provenance,
    Scope,
    as_utc,
)
from memstrata.write.decisions import Add, Delete, NewFact, Noop, Resolved, Update
from memstrata.write.ingest import history_event, new_memory


@dataclass(frozen=True)
class Gate:
    pending_below: float = 0.5
    promote_step: float = 0.2


@dataclass(frozen=True)
class PlannedWrites:
    batch: WriteBatch
    new_items: list[MemoryItem]  # need vectors before the batch is written
    summary: list[JsonDict]  # one entry per decision, for the job result


def fact_event_time(fact: NewFact) -> datetime | None:
    if not fact.event_time:
        return None
    try:
        return as_utc(datetime.fromisoformat(fact.event_time))
    except ValueError:
        return None  # an unparseable date from a model is dropped, the fact is kept


@dataclass
class _Planner:
    scope: Scope
    now: datetime
    actor: str
    gate: Gate
    inserts: list[MemoryItem] = field(default_factory=list)
    replacements: list[tuple[MemoryItem, datetime]] = field(default_factory=list)
    changes: list[StatusChange] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    summary: list[JsonDict] = field(default_factory=list)

    def memory_for(self, fact: NewFact, extra: JsonDict) -> MemoryItem:
        item = new_memory(
            self.scope, fact.text, now=self.now, kind=fact.kind, confidence=fact.confidence,
            metadata={"extracted_by": self.actor, **extra}, event_time=fact_event_time(fact),
            provenance=Provenance(source="messages", message_ids=fact.message_ids),
        )  # fmt: skip
        if fact.confidence < self.gate.pending_below:
            item = item.model_copy(update={"status": MemoryStatus.PENDING})
        return item

    def record(
        self,
        item: MemoryItem,
        action: HistoryAction,
        *,
        old_text: str | None = None,
        reason: str | None = None,
        details: JsonDict | None = None,
    ) -> None:
        event = history_event(item, action, at=self.now, actor=self.actor, old_text=old_text, reason=reason,
                              details=details)  # fmt: skip
        self.history.append(event)

    def add(self, decision: Add) -> None:
        item = self.memory_for(decision.fact, {})
        self.inserts.append(item)
        reason = "extracted; the model gave no decision, kept" if decision.defaulted else "extracted"
        self.record(item, HistoryAction.ADD, reason=reason)
        self.summary.append({"action": "ADD", "id": item.id, "text": item.text, "status": item.status.value,
                             "defaulted": decision.defaulted})  # fmt: skip

    def update(self, decision: Update) -> None:
        fact, target = decision.fact, decision.target
        sources = tuple(dict.fromkeys(target.provenance.message_ids + fact.message_ids))
        merged = NewFact(decision.text, fact.kind, max(fact.confidence, target.confidence), sources,
                         event_time=fact.event_time)  # fmt: skip
        event, current = fact_event_time(fact), target.event_time
        if event is not None and current is not None and event < current:
            self._older_version(merged, target)
            return
        item = self.memory_for(merged, {"supersedes": target.id})
        self.inserts.append(item)
        self.changes.append(StatusChange(target.id, target.scope, MemoryStatus.SUPERSEDED, self.now))
        self.record(item, HistoryAction.UPDATE, old_text=target.text, reason=f"supersedes {target.id}",
                    details={"message_ids": list(fact.message_ids), "supersedes": target.id})  # fmt: skip
        self.summary.append({"action": "UPDATE", "id": item.id, "supersedes": target.id, "old": target.text,
                             "text": item.text})  # fmt: skip

    def _older_version(self, fact: NewFact, current: MemoryItem) -> None:
        """The fact happened before the current memory's event: keep it as closed history."""
        item = self.memory_for(fact, {"superseded_by": current.id}).model_copy(
            update={"status": MemoryStatus.SUPERSEDED, "valid_to": current.valid_from}
        )
        self.inserts.append(item)
        self.record(item, HistoryAction.ADD, reason=f"older than the current version {current.id}; kept as history")
        self.summary.append({"action": "ADD", "id": item.id, "text": item.text, "status": "superseded",
                             "reason": "older event than the current memory"})  # fmt: skip

    def delete(self, decision: Delete) -> None:
        target = decision.target
        self.changes.append(StatusChange(target.id, target.scope, MemoryStatus.DELETED, self.now))
        self.record(target, HistoryAction.DELETE, reason=f"contradicted by: {decision.fact.text}",
                    details={"message_ids": list(decision.fact.message_ids)})  # fmt: skip
        self.summary.append({"action": "DELETE", "id": target.id, "old": target.text, "because": decision.fact.text})

    def noop(self, decision: Noop) -> None:
        target = decision.target
        self.summary.append({"action": "NONE", "id": target.id if target else None, "text": decision.fact.text,
                             "reason": decision.reason})  # fmt: skip
        if target is not None and target.status == MemoryStatus.PENDING:
            self._reinforce_pending(target, decision.fact)

    def _reinforce_pending(self, target: MemoryItem, fact: NewFact) -> None:
        confidence = min(1.0, max(target.confidence, fact.confidence) + self.gate.promote_step)
        promoted = confidence >= self.gate.pending_below
        sources = tuple(dict.fromkeys(target.provenance.message_ids + fact.message_ids))
        item = target.model_copy(
            update={
                "confidence": confidence,
                "status": MemoryStatus.ACTIVE if promoted else MemoryStatus.PENDING,
                "updated_at": self.now,
                "provenance": target.provenance.model_copy(update={"message_ids": sources}),
            }
        )
        self.replacements.append((item, target.updated_at))
        if promoted:
            self.record(item, HistoryAction.CONFIRM, old_text=target.text, reason="said again: promoted",
                        details={"message_ids": list(fact.message_ids), "confidence": confidence})  # fmt: skip


def plan_writes(
    resolved: Sequence[Resolved], scope: Scope, now: datetime, actor: str, gate: Gate | None = None
) -> PlannedWrites:
    planner = _Planner(scope, now, actor, gate or Gate())
    for decision in resolved:
        match decision:
            case Add():
                planner.add(decision)
            case Update():
                planner.update(decision)
            case Delete():
                planner.delete(decision)
            case Noop():
                planner.noop(decision)
    batch = WriteBatch(
        inserts=planner.inserts,
        replacements=planner.replacements,
        status_changes=planner.changes,
        history=planner.history,
    )
    return PlannedWrites(batch=batch, new_items=planner.inserts, summary=planner.summary)
