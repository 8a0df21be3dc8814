"""Plain texts into memories (``add(text)`` without inference), planned item by item, written at once.

What each item becomes:
- a new memory (ADD), or several consecutive parts when it is longer than ``limits.max_text_chars``;
- nothing new when the scope already holds the same text of the same kind (NONE: the existing memory is
  reinforced, as a repeated fact should be; new metadata keys are merged into it, an UPDATE);
- with a key: the memory under that key, updated (UPDATE) or left alone when nothing changed (NONE).

A bad item refuses the whole call (``on_error="raise"``) or is left out and reported by position
(``"skip"``). Nothing is written until every item is planned, and then in one transaction.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from memstrata.errors import ConcurrentWriteError, InvalidInputError
from memstrata.facade.core import MemoryCore
from memstrata.facade.long_text import part_label
from memstrata.facade.writes import TextOptions, rejected
from memstrata.indexing import content_hash, index_text, text_hash
from memstrata.query import Filters, ListQuery
from memstrata.records.history import history_event
from memstrata.records.versions import edited_version, kept_version, kept_version_event
from memstrata.sentences import split_spans
from memstrata.storage.protocol import WriteBatch
from memstrata.types import (
    AddResult,
    HistoryAction,
    HistoryEvent,
    MemoryEvent,
    MemoryItem,
    MemoryStatus,
    Provenance,
    Scope,
)
from memstrata.write.ingest import OnError, ParsedInput, TextItem, new_memory

Action = Literal["ADD", "UPDATE", "NONE"]
WHOLE_HASH = "text_sha256"  # metadata of every part of a long text: finds them all, and a second add of it


@dataclass
class _Plan:
    scope: Scope
    now: datetime
    actor: str
    inserts: dict[str, MemoryItem] = field(default_factory=dict)  # by id; a later duplicate may amend one
    replacements: list[tuple[MemoryItem, datetime]] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    events: list[MemoryEvent] = field(default_factory=list)
    reinforce: list[str] = field(default_factory=list)
    planned: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, content hash) -> id planned
    keys: set[str] = field(default_factory=set)
    reembed: set[str] = field(default_factory=set)  # ids of updated memories whose indexed text changed
    kept: list[MemoryItem] = field(default_factory=list)  # the texts updates replace, as closed versions

    def event(self, item: MemoryItem, action: Action, index: int, previous: str | None = None) -> None:
        self.events.append(MemoryEvent(id=item.id, event=action, memory=item.text, previous_memory=previous,
                                       kind=item.kind, index=index))  # fmt: skip


# A write planned on what another writer changed meanwhile is planned again from the store: of N writers racing
# on one key at least one wins each round, so every writer gets through within N rounds. The budget is a time, not
# a count of rounds: 40 concurrent requests on one key (the service admits 32 at once) ran out of 40 rounds.
_RETRY_FOR_SECONDS = 30.0
_CLOCK_SKEW = timedelta(minutes=10)  # a caller's clock a little ahead of ours is not a value for a later day


def add_texts(
    core: MemoryCore,
    parsed: ParsedInput,
    scope: Scope,
    metadata: dict[str, Any],
    options: TextOptions,
    actor: str,
    on_error: OnError,
) -> AddResult:
    def planned() -> tuple[_Plan, list[tuple[int, str]], WriteBatch]:
        plan = _Plan(scope=scope, now=core.clock(), actor=actor)
        errors = list(parsed.rejected)
        for item in parsed.items:
            try:
                _plan_item(core, plan, item, {**metadata, **(item.metadata or {})}, options.for_item(item))
            except InvalidInputError as exc:
                if on_error == "raise":
                    raise
                errors.append((item.index, str(exc)))
        inserts = list(plan.inserts.values())
        history = [history_event(item, HistoryAction.ADD, at=plan.now, actor=actor) for item in inserts]
        to_embed = inserts + plan.kept + [new for new, _ in plan.replacements if new.id in plan.reembed]
        vectors = core.vector_batch(to_embed) if to_embed else WriteBatch()
        distinct = [memory_id for memory_id in plan.planned.values() if memory_id in plan.inserts]
        return plan, errors, replace(vectors, inserts=inserts + plan.kept, replacements=plan.replacements,
                                     history=history + plan.history, distinct_texts=distinct)  # fmt: skip

    give_up_at = time.monotonic() + _RETRY_FOR_SECONDS
    for attempt in itertools.count():
        plan, errors, batch = planned()
        try:
            if not batch.is_empty():
                core.store.write(batch)
            break
        except ConcurrentWriteError as exc:  # two adds of one new key, or of one key's values, at the same moment
            if time.monotonic() >= give_up_at:
                raise ConcurrentWriteError(
                    f"other writers kept changing the same key or text for {_RETRY_FOR_SECONDS:.0f} s, so this add "
                    f"was not stored; send it again (last conflict: {exc})"
                ) from exc
            time.sleep(random.uniform(0, min(0.05, 0.005 * (attempt + 1))))
    if plan.reinforce:
        core.access.record_now(scope, plan.reinforce)
    return AddResult(results=tuple(plan.events), errors=rejected(replace(parsed, rejected=sorted(errors))))


def _plan_item(core: MemoryCore, plan: _Plan, item: TextItem, metadata: dict[str, Any], options: TextOptions) -> None:
    limit = core.settings.limits.max_text_chars
    if options.key is not None:
        if len(item.text) > limit:
            raise InvalidInputError(
                f"item {item.index}: a keyed memory must fit in one memory (limits.max_text_chars={limit}); "
                f"it has {len(item.text)} characters"
            )
        _plan_keyed(core, plan, item, metadata, options)
    elif len(item.text) > limit:
        _plan_parts(core, plan, item, metadata, options)
    else:
        _plan_plain(core, plan, item, metadata, options)


def _new(
    plan: _Plan, text: str, metadata: dict[str, Any], options: TextOptions, provenance: Provenance | None = None
) -> MemoryItem:
    return new_memory(plan.scope, text, now=plan.now, kind=options.kind, metadata=metadata, key=options.key,
                      confidence=options.confidence, event_time=options.event_time,
                      provenance=provenance or Provenance(source="api"))  # fmt: skip


def _adds_metadata(existing: Mapping[str, Any], metadata: Mapping[str, Any]) -> bool:
    return any(existing.get(name, _MISSING) != value for name, value in metadata.items())


_MISSING = object()


def _amend(
    plan: _Plan, old: MemoryItem, text: str, metadata: dict[str, Any], reason: str, changes: Mapping[str, object] = {}
) -> None:
    """Plan an in-place update of a stored memory (same id), with ``changes`` to its other fields; history keeps
    the old text, and a new text keeps it as a closed version too (records/versions.py)."""
    update = {"text": text, "metadata": {**old.metadata, **metadata}, "updated_at": plan.now, **changes}
    new = old.model_copy(update=update)
    became_true = changes.get("event_time")  # the caller says when the new value became true (valid time)
    if text != old.text:
        moment = became_true if isinstance(became_true, datetime) else plan.now
        new = edited_version(new, plan.now, valid_from=moment)
        plan.kept.append(kept_version(old, plan.now, valid_to=moment))
        plan.history.append(kept_version_event(plan.kept[-1], actor=plan.actor))
    elif isinstance(became_true, datetime) and became_true < old.valid_from:  # true earlier than first said
        new = new.model_copy(update={"valid_from": became_true})
    plan.replacements.append((new, old.updated_at))
    if index_text(new) != index_text(old):
        plan.reembed.add(new.id)
    plan.history.append(history_event(new, HistoryAction.UPDATE, at=plan.now, actor=plan.actor, old_text=old.text,
                                      reason=reason))  # fmt: skip


def _plan_keyed(core: MemoryCore, plan: _Plan, item: TextItem, metadata: dict[str, Any], options: TextOptions) -> None:
    key = str(options.key)
    if key in plan.keys:
        raise InvalidInputError(f"item {item.index}: key {key} appears twice in this add(); send one value per key")
    plan.keys.add(key)
    if options.event_time is not None and options.event_time > plan.now + _CLOCK_SKEW:
        # A key answers with the value true now (and, with as_of, those true before); a value that only holds
        # from a later day would be the current record while another value is true (stored so, it hid the
        # current value from search and listings, or answered as current at once).
        raise InvalidInputError(
            f"item {item.index}: key {key} holds the value true now; {options.event_time.isoformat()} is later "
            "than now. Add the value when it takes effect, or store the plan without a key (event_time works there)"
        )
    existing = core.store.find_by_key(plan.scope, key, exact=True)
    if existing is None:
        new = _new(plan, item.text, metadata, options)
        plan.inserts[new.id] = new
        plan.event(new, "ADD", item.index)
        return
    changes = options.changes_to(existing)  # a kind, confidence or event time the caller named anew
    moment = options.event_time or plan.now  # when the new value becomes true
    # Older than the key's value: a value dated before it, or one for now while the stored record is dated later
    # (written before such values were refused). Two writers' clocks microseconds apart are not that.
    older = (moment < existing.valid_from if options.event_time is not None
             else existing.valid_from > plan.now + _CLOCK_SKEW)  # fmt: skip
    if older and item.text != existing.text:
        # an older value imported late, or a value for now while the key's latest is dated later (planned):
        # it is kept between its neighbours and never replaces a value that becomes true after it
        _plan_older_value(core, plan, existing, item, metadata, options, moment)
        return
    if item.text != existing.text and "event_time" not in changes and existing.event_time is not None:
        changes["event_time"] = None  # the old value's event time is not the new value's
    if existing.text == item.text and not changes and not _adds_metadata(existing.metadata, metadata):
        plan.reinforce.append(existing.id)
        plan.event(existing, "NONE", item.index)
        return
    changed = f" ({', '.join(changes)})" if changes else ""
    _amend(plan, existing, item.text, metadata, f"new value for key {key}{changed}", changes)
    plan.event(plan.replacements[-1][0], "UPDATE", item.index, previous=existing.text)


def _plan_older_value(
    core: MemoryCore,
    plan: _Plan,
    current: MemoryItem,
    item: TextItem,
    metadata: dict[str, Any],
    options: TextOptions,
    moment: datetime,
) -> None:
    """A value for a key that became true before the key's current one (an old record imported late): kept as a
    closed version, valid from its event time until the next known value; the one it interrupts ends there.
    The current value stays (an older event never replaces a newer one)."""
    listed = ListQuery(scope=plan.scope, limit=10_000, filters=Filters(key_prefix=current.key,
                       status=(MemoryStatus.SUPERSEDED,)))  # fmt: skip
    versions = [m for m in core.store.list_memories(listed) if m.key == current.key and m.scope == plan.scope]
    later = [m.valid_from for m in (*versions, current) if m.valid_from > moment]
    older = _new(plan, item.text, metadata, options).model_copy(update={
        "status": MemoryStatus.SUPERSEDED, "valid_to": min(later), "recorded_to": plan.now,
        "metadata": {**metadata, "superseded_by": current.id}})  # fmt: skip
    plan.inserts[older.id] = older
    for version in versions:  # the version that was true at ``moment`` now ends there
        if version.valid_from <= moment and (version.valid_to is None or version.valid_to > moment):
            plan.replacements.append((version.model_copy(update={"valid_to": moment, "updated_at": plan.now}),
                                      version.updated_at))  # fmt: skip
            plan.history.append(history_event(version, HistoryAction.UPDATE, at=plan.now, actor=plan.actor,
                                              old_text=version.text, reason=f"valid until {moment.isoformat()}, "
                                              f"when {older.id} became true"))  # fmt: skip
    plan.event(older, "ADD", item.index)


def _plan_plain(core: MemoryCore, plan: _Plan, item: TextItem, metadata: dict[str, Any], options: TextOptions) -> None:
    fingerprint = (options.kind, content_hash(item.text))
    planned_id = plan.planned.get(fingerprint)
    if planned_id is not None:  # the same text earlier in this call: one memory, with both items' metadata
        first = plan.inserts[planned_id]
        plan.inserts[planned_id] = first.model_copy(update={"metadata": {**first.metadata, **metadata}})
        plan.event(first, "NONE", item.index)
        return
    stored = [m for m in core.store.find_by_hash(plan.scope, fingerprint[1]) if m.scope == plan.scope
              and m.kind == options.kind]  # fmt: skip
    if stored:
        existing = stored[0]
        if _adds_metadata(existing.metadata, metadata):
            _amend(plan, existing, existing.text, metadata, "the same text was added again with new metadata")
            plan.event(plan.replacements[-1][0], "UPDATE", item.index, previous=existing.text)
        else:
            plan.reinforce.append(existing.id)
            plan.event(existing, "NONE", item.index)
        return
    new = _new(plan, item.text, metadata, options)
    plan.inserts[new.id] = new
    plan.planned[fingerprint] = new.id
    plan.event(new, "ADD", item.index)


def _plan_parts(core: MemoryCore, plan: _Plan, item: TextItem, metadata: dict[str, Any], options: TextOptions) -> None:
    """A long text: consecutive parts, each a memory, linked by the hash of the whole text and the first part's id."""
    whole = text_hash(item.text)
    listed = ListQuery(scope=plan.scope, filters=Filters(kind=(options.kind,), metadata={WHOLE_HASH: whole}),
                       limit=10_000, order_by="created_at", descending=False)  # fmt: skip
    same = [part for part in core.store.list_memories(listed) if part.scope == plan.scope]
    if same:  # the text again: every part is reinforced (or takes the new metadata), the first part answers
        first = next((part for part in same if part.metadata.get("part_of") == part.id), same[0])
        if _adds_metadata(first.metadata, metadata):
            for part in same:
                _amend(plan, part, part.text, metadata, "the same text was added again with new metadata")
            plan.event(first, "UPDATE", item.index, previous=first.text)
        else:
            plan.reinforce.extend(part.id for part in same)
            plan.event(first, "NONE", item.index)
        return
    spans = [(start, end) for start, end in split_spans(item.text, core.settings.limits.max_text_chars)
             if item.text[start:end].strip()]  # fmt: skip
    first_id: str | None = None
    for number, (start, end) in enumerate(spans, start=1):
        part_metadata = {**metadata, WHOLE_HASH: whole, "part": part_label(number, len(spans))}
        if first_id is not None:
            part_metadata["part_of"] = first_id
        part = _new(plan, item.text[start:end], part_metadata, options,
                    provenance=Provenance(source="api", span=(start, end)))  # fmt: skip
        if first_id is None:
            first_id = part.id
            part = part.model_copy(update={"metadata": {**part.metadata, "part_of": part.id}})
        plan.inserts[part.id] = part
        plan.event(part, "ADD", item.index)
