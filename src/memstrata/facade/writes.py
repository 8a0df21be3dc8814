"""What ``add`` / ``update`` / ``delete`` write, as plans over the core: the facade validates, these build
the records and commit them in the order the principles ask (raw turns first, then vectors)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from memstrata.errors import ConflictError, InvalidInputError, ProviderError
from memstrata.facade.core import MemoryCore
from memstrata.facade.long_text import preceding_turns, turn_episodes
from memstrata.indexing import index_text
from memstrata.patterns import lazy_pattern
from memstrata.records.history import history_event
from memstrata.records.versions import edited_version, kept_version, kept_version_event
from memstrata.storage.protocol import WriteBatch
from memstrata.types import (
    AddResult,
    HistoryAction,
    ItemError,
    JsonDict,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    Message,
    Scope,
    StoredMessage,
)
from memstrata.validation import clean_text, clean_time
from memstrata.write.ingest import ParsedInput, TextItem, check_key, check_kind, check_metadata


@dataclass(frozen=True)
class TextOptions:
    """How plain texts become memories. Only meaningful for text input without inference."""

    kind: str = MemoryKind.FACT.value
    key: str | None = None
    confidence: float = 1.0
    event_time: datetime | None = None
    given: frozenset[str] = frozenset()  # the options the caller named (the others are defaults)

    @classmethod
    def checked(
        cls, kind: str | None, key: str | None, confidence: float | None, event_time: datetime | str | None
    ) -> TextOptions:
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            raise InvalidInputError(f"confidence must be between 0 and 1, got {confidence}")
        return cls(
            kind=check_kind(kind) if kind is not None else MemoryKind.FACT.value,
            key=check_key(key),
            confidence=1.0 if confidence is None else confidence,
            event_time=clean_time(event_time, field="event_time"),
            given=_named(kind=kind, confidence=confidence, event_time=event_time),
        )

    def for_item(self, item: TextItem) -> TextOptions:
        """The call's options with the item's own ones on top."""
        return TextOptions(
            kind=item.kind if item.kind is not None else self.kind,
            key=item.key if item.key is not None else self.key,
            confidence=item.confidence if item.confidence is not None else self.confidence,
            event_time=item.event_time if item.event_time is not None else self.event_time,
            given=self.given | _named(kind=item.kind, confidence=item.confidence, event_time=item.event_time),
        )

    def changes_to(self, existing: MemoryItem) -> dict[str, object]:
        """The options the caller named that differ from a stored memory's: what a new value for its key changes
        besides the text (an option left out keeps what the memory has)."""
        wanted = {"kind": self.kind, "confidence": self.confidence, "event_time": self.event_time}
        return {name: wanted[name] for name in sorted(self.given) if getattr(existing, name) != wanted[name]}


def _named(**options: object) -> frozenset[str]:
    return frozenset(name for name, value in options.items() if value is not None)


def refuse_ignored_options(parsed: ParsedInput, *, infer: bool, given: Mapping[str, object]) -> None:
    """Options that would be silently ignored are refused instead (issue: add() arguments that contradict)."""
    named = [name for name, value in given.items() if value is not None]
    if infer and any(item.has_options() for item in parsed.items):
        named.append("per-item options")
    if not named:
        return
    if infer:
        raise InvalidInputError(
            f"{', '.join(named)} cannot be combined with infer=True: the model decides kinds, keys, confidence and "
            "event times from the turns; drop them, or add the text without infer"
        )
    if parsed.messages:
        raise InvalidInputError(
            f"{', '.join(named)} apply to plain texts, not conversation turns (turns are stored as episodes with "
            "their own timestamps); drop them, or pass the text as a string"
        )


def add_turns(core: MemoryCore, parsed: ParsedInput, scope: Scope, metadata: dict[str, Any], actor: str) -> AddResult:
    """Raw turns and their episodes are committed before any model runs; vectors follow in a second write."""
    now = core.clock()
    items = turn_episodes(parsed.messages, scope, metadata, now, max_chars=core.settings.limits.max_text_chars,
                          previous=preceding_turns(core, scope))  # fmt: skip
    history = [history_event(item, HistoryAction.ADD, at=now, actor=actor) for item in items]
    core.store.write(WriteBatch(messages=[(m, scope) for m in parsed.messages], inserts=items, history=history))
    try:
        if items:
            core.store.write(core.vector_batch(items))
    except ProviderError as exc:
        raise ProviderError(
            f"stored {len(parsed.messages)} raw turns as {len(items)} episodes, but embedding failed "
            f"({exc}); they are keyword-searchable now; run `memstrata reindex` to add their vectors"
        ) from exc
    positions = dict(zip((m.id for m in parsed.messages), parsed.message_positions, strict=True))

    def added(item: MemoryItem) -> MemoryEvent:
        index = positions.get(item.provenance.message_ids[0])
        return MemoryEvent(id=item.id, event="ADD", memory=item.text, kind=item.kind, index=index)

    return AddResult(
        results=tuple(added(item) for item in items),
        message_ids=tuple(m.id for m in parsed.messages),
        errors=rejected(parsed),
    )


def scoped_turn_id(turn_id: str, scope: Scope) -> str:
    """The stored id of a turn the caller named ``turn_id`` in ``scope``: ``<turn_id>@<scope digest>``. A caller's
    id names a turn within its own scope, so two users or tenants numbering their turns 1, 2, 3 do not collide,
    and a clash says nothing about another scope's turns (ids are unique in the whole store)."""
    parts = (scope.tenant_id or "", scope.user_id or "", scope.agent_id or "", scope.session_id or "")
    return f"{turn_id}@{hashlib.sha256(chr(31).join(parts).encode()).hexdigest()[:12]}"


def store_turn_ids(core: MemoryCore, parsed: ParsedInput, scope: Scope) -> tuple[ParsedInput, tuple[str, ...]]:
    """The turns to store, with the caller's ids scoped (:func:`scoped_turn_id`), and the stored id of every turn.
    A turn already stored under its id (a retried request, a conversation imported again) is not stored twice; a
    stored turn with that id but other content is a conflict, refused before anything is written."""
    _refuse_repeated_ids(parsed)
    parsed, derived = _with_ids_of_dated_turns(parsed)
    named = {m.id: scoped_turn_id(m.id, scope) for m in parsed.messages if "id" in m.model_fields_set}
    if not named:
        return parsed, tuple(m.id for m in parsed.messages)
    # A turn stored before ids were scoped keeps its id as given: a retry finds it under that id.
    stored = {s.message.id: s for s in core.store.messages_by_id(scope, [*named.values(), *named])}
    twins = _StoredTwins(core, scope, parsed.messages, claimed=set(stored))
    keep: list[int] = []
    turns: list[Message] = []
    ids: list[str] = []
    for position, message in enumerate(parsed.messages):
        if message.id not in named:
            keep.append(position)
            turns.append(message)
            ids.append(message.id)
            continue
        found = stored.get(named[message.id]) or stored.get(message.id) or twins.take(message, message.id in derived)
        if found is None:
            keep.append(position)
            turns.append(message.model_copy(update={"id": named[message.id]}))
            ids.append(named[message.id])
        elif (found.message.role, found.message.content) != (message.role, message.content):
            raise ConflictError(
                f"message id {message.id} already holds another turn in this scope; give the new turn another id "
                "(or none: one is made for it)"
            )
        else:
            ids.append(found.message.id)
    kept = replace(parsed, messages=turns, message_positions=[parsed.message_positions[p] for p in keep])
    return kept, tuple(ids)


def _with_ids_of_dated_turns(parsed: ParsedInput) -> tuple[ParsedInput, set[str]]:
    """A turn without an id but with its own timestamp is named by what it is (role, text, time, and its place among
    identical ones of the call), so a conversation imported again is not stored twice: chat logs carry no ids, and
    an export imported twice doubled every turn and episode (found by a user trial). A turn without a timestamp is
    said now, and saying "ok" twice is two turns. Returns the input and the ids made here."""
    seen: dict[str, int] = {}
    messages = []
    for message in parsed.messages:
        if "id" in message.model_fields_set or "timestamp" not in message.model_fields_set:
            messages.append(message)
            continue
        digest = hashlib.sha256(chr(31).join(map(str, _said(message))).encode()).hexdigest()[:20]
        seen[digest] = seen.get(digest, 0) + 1
        turn_id = f"t-{digest}" if seen[digest] == 1 else f"t-{digest}-{seen[digest]}"
        messages.append(message.model_copy(update={"id": turn_id}))  # set, so stored and found as a caller's id
    made = {m.id for m, given in zip(messages, parsed.messages, strict=True) if m is not given}
    return replace(parsed, messages=messages), made


def _said(message: Message) -> tuple[str, str, str, str]:
    return message.role, message.name or "", message.content, message.timestamp.isoformat()


_MADE_ID = lazy_pattern(r"t-[0-9a-f]{20}(-\d+)?@")  # an id _with_ids_of_dated_turns made, as stored


class _StoredTwins:
    """Turns of exactly this scope already stored with the same role, speaker, words and time as a dated turn of
    the call, under another id: a history imported once with its turn ids and again without them (or the other way
    round) was stored twice, as the two imports named each turn differently (found by a user trial). A turn the
    call names itself matches only a turn whose id was made from what it said, never another caller's id; each
    stored turn stands for one turn of the call."""

    def __init__(self, core: MemoryCore, scope: Scope, messages: list[Message], *, claimed: set[str]) -> None:
        self._core, self._scope, self._messages, self._claimed = core, scope, messages, claimed
        self._by_said: dict[tuple[str, str, str, str], list[StoredMessage]] | None = None

    def _stored(self) -> dict[tuple[str, str, str, str], list[StoredMessage]]:
        """Read on the first turn not found by its id (a retried call finds every turn by id and reads nothing)."""
        if self._by_said is None:
            times = sorted({m.timestamp for m in self._messages if "timestamp" in m.model_fields_set})
            self._by_said = {}
            for found in self._core.store.messages_said_at(self._scope, times):
                if found.message.id not in self._claimed:
                    self._by_said.setdefault(_said(found.message), []).append(found)
        return self._by_said

    def take(self, message: Message, id_was_made: bool) -> StoredMessage | None:
        if "timestamp" not in message.model_fields_set:
            return None
        twins = self._stored().get(_said(message), [])
        for twin in twins:
            if id_was_made or _MADE_ID.match(twin.message.id):
                twins.remove(twin)
                return twin
        return None


def _refuse_repeated_ids(parsed: ParsedInput) -> None:
    """Two turns of one call under one id: the second would be taken for a stored copy of the first, or clash with
    it (the store reported a unique-key violation as if the id had been used before)."""
    first_at: dict[str, int] = {}
    for position, message in zip(parsed.message_positions, parsed.messages, strict=True):
        if "id" not in message.model_fields_set:
            continue
        if message.id in first_at:
            raise InvalidInputError(
                f"messages[{first_at[message.id]}] and messages[{position}] both have id {message.id!r}; give each "
                "turn of a call its own id (or none: one is made for it)"
            )
        first_at[message.id] = position


def rejected(parsed: ParsedInput) -> tuple[ItemError, ...]:
    return tuple(ItemError(index=index, error=error) for index, error in parsed.rejected)


def updated_version(
    core: MemoryCore, old: MemoryItem, text: str | None, metadata: Mapping[str, Any] | None
) -> MemoryItem:
    changes: dict[str, Any] = {"updated_at": core.clock()}
    if text is not None:
        changes["text"] = clean_text(text, max_chars=core.settings.limits.max_text_chars)
    if metadata is not None:
        changes["metadata"] = {**old.metadata, **check_metadata(metadata)}
    return old.model_copy(update=changes)


def write_update(
    core: MemoryCore, old: MemoryItem, new: MemoryItem, *, actor: str, reason: str | None, keep_version: bool = True
) -> MemoryItem:
    """Edit in place (same id), re-embedding only when the indexed text changed; history keeps the old text, and
    a text change keeps it as a closed version too (records/versions.py) unless ``keep_version`` is off (a rolling
    summary). Returns the memory as written."""
    kept: list[MemoryItem] = []
    if new.text != old.text and keep_version:
        # A turn is what was said at its time: an edit corrects the record (valid as said, from then; the old text
        # never held), where an edit of a fact says it changed now. Re-dated to the edit, a corrected 2024 turn
        # left "as_of" 2024 with the uncorrected text and the corrected one nowhere.
        since = old.valid_from if old.kind == "episode" else None
        new = edited_version(new, new.updated_at, valid_from=since)
        kept = [kept_version(old, new.updated_at, valid_to=since)]
    details: JsonDict = {"message_ids": list(new.provenance.message_ids)}
    if new.metadata != old.metadata:  # a metadata edit leaves the text as it was: the change itself is recorded
        details["metadata"] = {"old": old.metadata, "new": new.metadata}
    event = history_event(new, HistoryAction.UPDATE, at=new.updated_at, actor=actor, old_text=old.text, reason=reason,
                          details=details)  # fmt: skip
    history = [event, *(kept_version_event(version, actor=actor) for version in kept)]
    to_embed = ([new] if index_text(new) != index_text(old) else []) + kept
    vectors = core.vector_batch(to_embed) if to_embed else WriteBatch()
    core.store.write(replace(vectors, inserts=kept, replacements=[(new, old.updated_at)], history=history))
    return new
