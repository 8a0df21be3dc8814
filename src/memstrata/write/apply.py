"""Turn checked decisions into one WriteBatch: new memories, closed versions, history, and the job summary.

Two clocks. *Valid time* (valid_from / valid_to: when a fact was true in the world) comes from the turns: a
fact is valid from the moment its turn was said or the past moment it names, and a memory it replaces stops
being valid at that same moment. *Record time* (created_at / recorded_to: when the store learned it and
stopped holding it as current) is the processing time. So ``as_of`` over an imported 2023 chat answers with
2023's state, and ``known_at`` with what the store held.

- An UPDATE never overwrites: the old memory is closed (superseded) and the new version points back at it.
- Conflicts resolve by valid time: a fact older than the memory it would replace (an old chat imported after
  a newer one) is stored as a closed historical version and the current memory stays.
- Facts below the confidence gate go in as pending and replace nothing (metadata ``would_replace`` names what
  they contradict, for the reviewer); a pending memory said again gains confidence and is promoted once it clears
  the gate.
- Every fact's history event names the turns it came from and any model proposal the engine refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from memstrata.records.history import history_event
from memstrata.storage.protocol import StatusChange, WriteBatch
from memstrata.types import HistoryAction, HistoryEvent, JsonDict, MemoryItem, MemoryStatus, Provenance, Scope
from memstrata.write.decisions import Add, NewFact, Noop, Rejection, Resolved, Update
from memstrata.write.facts import known_before, valid_from
from memstrata.write.ingest import new_memory

# A NONE (the fact repeats a memory) is recorded on that memory as a confirmation by repetition, with
# details.decision = "NONE"; there is no separate history action for "said again".
_REPEATED = HistoryAction.CONFIRM


@dataclass(frozen=True)
class Gate:
    pending_below: float = 0.5
    promote_step: float = 0.2


@dataclass(frozen=True)
class PlannedWrites:
    batch: WriteBatch
    new_items: list[MemoryItem]  # need vectors before the batch is written
    summary: list[JsonDict]  # one entry per decision, for the job result
    rejected: list[JsonDict]  # proposals the engine refused, for the job result


def _rejections(rejected: Sequence[Rejection]) -> list[JsonDict]:
    return [r.as_json() for r in rejected]


@dataclass
class Planner:
    """Plans one job's decisions in order; later facts see the memories earlier ones created or closed."""

    scope: Scope
    now: datetime
    actor: str
    gate: Gate = field(default_factory=Gate)
    inserts: dict[str, MemoryItem] = field(default_factory=dict)
    replacements: list[tuple[MemoryItem, datetime]] = field(default_factory=list)
    changes: list[StatusChange] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    summary: list[JsonDict] = field(default_factory=list)
    rejected: list[JsonDict] = field(default_factory=list)
    closed: set[str] = field(default_factory=set)

    def apply(self, decision: Resolved, fact_number: int) -> None:
        """Plan one decision; ``fact_number`` (the fact's place in the extraction) tags its summary entries."""
        self.rejected += [
            {"fact": fact_number, "text": decision.fact.text, **r} for r in _rejections(decision.rejected)
        ]
        first = len(self.summary)
        match decision:
            case Add():
                self._add(decision)
            case Update():
                self._update(decision)
            case Noop():
                self._noop(decision)
        for entry in self.summary[first:]:
            entry["fact"] = fact_number

    def is_live(self, memory_id: str) -> bool:
        return memory_id not in self.closed

    def live_inserts(self) -> list[MemoryItem]:
        return [item for item in self.inserts.values() if item.id not in self.closed]

    def planned(self) -> PlannedWrites:
        batch = WriteBatch(
            inserts=list(self.inserts.values()),
            replacements=self.replacements,
            status_changes=self.changes,
            history=self.history,
            # a current text another worker stored meanwhile (two processes extracting for one user) is refused
            # by the write, and the job decides again instead of storing the fact twice
            distinct_texts=[item.id for item in self.inserts.values() if item.status == MemoryStatus.ACTIVE],
        )
        return PlannedWrites(batch, list(self.inserts.values()), self.summary, self.rejected)

    # --- decisions ---------------------------------------------------------------------
    def _memory_for(self, fact: NewFact, extra: JsonDict) -> MemoryItem:
        item = new_memory(
            self.scope, fact.text, now=self.now, kind=fact.kind, confidence=fact.confidence,
            metadata={"extracted_by": self.actor, **extra}, event_time=fact.event_time, key=fact.key,
            provenance=Provenance(source="messages", message_ids=fact.message_ids, said_at=fact.said_at),
        )  # fmt: skip
        updates: JsonDict = {"valid_from": valid_from(fact, self.now)}
        if fact.confidence < self.gate.pending_below:
            updates["status"] = MemoryStatus.PENDING
        return item.model_copy(update=updates)

    def _record(
        self,
        item: MemoryItem,
        action: HistoryAction,
        fact: NewFact,
        reason: str,
        *,
        old_text: str | None = None,
        **details: object,
    ) -> None:
        """Every event names the turns that caused it (``message_ids``) and the fact as extracted."""
        extra: JsonDict = {"message_ids": list(fact.message_ids), "fact": fact.text, **details}
        self.history.append(
            history_event(item, action, at=self.now, actor=self.actor, reason=reason, details=extra, old_text=old_text)
        )

    def _add(self, decision: Add, *, would_replace: Sequence[str] = ()) -> None:
        extra: JsonDict = {"would_replace": list(would_replace)} if would_replace else {}
        item = self._memory_for(decision.fact, extra)
        self.inserts[item.id] = item
        reason = "extracted; waits for review, replacing nothing" if would_replace else "extracted"
        self._record(item, HistoryAction.ADD, decision.fact, reason, rejected=_rejections(decision.rejected), **extra)
        self.summary.append({"action": "ADD", "id": item.id, "text": item.text, "status": item.status.value, **extra})

    def _update(self, decision: Update) -> None:
        fact = decision.fact
        if fact.confidence < self.gate.pending_below:
            # A fact the engine does not trust (a name altered, a negation dropped: write/extract.py) never replaces
            # a memory: given the replaced one's confidence it went in as active, and "用户对花生过敏，不对虾过敏"
            # superseded the allergy it had turned around. It waits for review beside it.
            self._add(Add(fact, decision.rejected), would_replace=[target.id for target in decision.targets])
            return
        moment = valid_from(fact, self.now)
        live = [target for target in decision.targets if self.is_live(target.id)]
        replaced = [target for target in live if not known_before(fact, target, self.now)]
        if not replaced:
            # History of a current memory, not of one waiting for review: a pending one holds nothing yet (the new
            # fact was stored as replaced by a pending plan on another topic: a user trial)
            held = [target for target in live or decision.targets if target.status != MemoryStatus.PENDING]
            if not held:
                self._add(Add(fact, decision.rejected))
                return
            self._older_version(fact, max(held, key=lambda t: t.valid_from), decision.rejected)
            return
        sources = tuple(dict.fromkeys([*fact.message_ids, *(m for t in replaced for m in t.provenance.message_ids)]))
        # Every other field (event time, its end, when it was said) stays the fact's own.
        merged = replace(
            fact, confidence=max([fact.confidence, *(t.confidence for t in replaced)]), message_ids=sources
        )
        item = self._memory_for(merged, {"supersedes": replaced[0].id})
        self.inserts[item.id] = item
        for target in replaced:
            self._close(target, moment)
            self._record(item, HistoryAction.UPDATE, fact, f"{decision.relation} {target.id}: {target.text}",
                         supersedes=target.id, old_text=target.text, relation=decision.relation,
                         rejected=_rejections(decision.rejected))  # fmt: skip
            self.summary.append({"action": "UPDATE", "id": item.id, "supersedes": target.id, "old": target.text,
                                 "text": item.text, "relation": decision.relation})  # fmt: skip

    def _close(self, target: MemoryItem, moment: datetime) -> None:
        """The target stops being valid when the new fact starts; the store stops holding it now."""
        valid_to = max(moment, target.valid_from)
        self.closed.add(target.id)
        planned = self.inserts.get(target.id)
        if planned is not None:  # a fact of an earlier turn of this same job
            self.inserts[target.id] = planned.model_copy(
                update={"status": MemoryStatus.SUPERSEDED, "valid_to": valid_to, "recorded_to": self.now}
            )
            return
        self.changes.append(StatusChange(target.id, target.scope, MemoryStatus.SUPERSEDED, self.now, valid_to=valid_to))

    def _older_version(self, fact: NewFact, current: MemoryItem, rejected: Sequence[Rejection]) -> None:
        """The fact was true before the current memory: keep it as closed history, valid until the current one."""
        item = self._memory_for(fact, {"superseded_by": current.id})
        item = item.model_copy(
            update={"status": MemoryStatus.SUPERSEDED, "valid_to": max(current.valid_from, item.valid_from),
                    "recorded_to": self.now}
        )  # fmt: skip
        self.inserts[item.id] = item
        self.closed.add(item.id)
        self._record(item, HistoryAction.ADD, fact, f"older than the current version {current.id}; kept as history",
                     superseded_by=current.id, rejected=_rejections(rejected))  # fmt: skip
        self.summary.append({"action": "ADD", "id": item.id, "text": item.text, "status": "superseded",
                             "reason": "older than the current memory", "superseded_by": current.id})  # fmt: skip

    def _noop(self, decision: Noop) -> None:
        target = decision.target
        self.summary.append({"action": "NONE", "id": target.id, "text": decision.fact.text, "same_as": target.text,
                             "reason": decision.reason})  # fmt: skip
        if target.status == MemoryStatus.PENDING and target.id not in self.inserts:
            self._reinforce_pending(target, decision.fact, decision)
            return
        self._record(target, _REPEATED, decision.fact, f"said again (NONE): {decision.reason}", old_text=target.text,
                     decision="NONE", rejected=_rejections(decision.rejected))  # fmt: skip

    def _reinforce_pending(self, target: MemoryItem, fact: NewFact, decision: Noop) -> None:
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
        reason = "said again: promoted" if promoted else "said again: more confident, still pending"
        self._record(item, HistoryAction.CONFIRM, fact, reason, old_text=target.text, decision="NONE",
                     confidence=confidence, rejected=_rejections(decision.rejected))  # fmt: skip
