"""Turning ``add()`` input into records: raw turns, episode memories, text memories, history.

Everything here is pure: it validates and plans, it does not touch the store or a model. The
facade applies the plan. With ``infer=True`` (the LLM write path) the same raw turns are the
input of extraction; this module is where both paths start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memstrata.errors import InvalidInputError
from memstrata.query import looks_like_key, validate_kind
from memstrata.read.evidence import scripts
from memstrata.types import (
    JsonDict,
    MemoryItem,
    MemoryKind,
    Message,
    Provenance,
    Scope,
    new_id,
    string_problem,
)
from memstrata.validation import (
    check_string,
    check_strings,
    clean_text,
    clean_time,
    describe_validation_error,
    is_blank,
)

MessageInput = str | Mapping[str, Any] | Message
AddInput = str | bytes | Message | Mapping[str, Any] | Sequence[MessageInput]
OnError = Literal["raise", "skip"]
WHOLE = "limits.max_whole_chars"  # the longest text accepted at all (longer than max_text_chars: kept in parts)


class TextItemIn(BaseModel):
    """A plain text with its own options, as a dict in an add() list: ``{"text": ..., "metadata": {...}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str | bytes
    metadata: dict[str, Any] | None = None
    kind: str | None = None
    key: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    event_time: datetime | None = None


@dataclass(frozen=True)
class TextItem:
    """One plain text to store; its options (None: the call's) override those of the add() call."""

    index: int  # position in the caller's input, for errors and results
    text: str
    metadata: JsonDict | None = None
    kind: str | None = None
    key: str | None = None
    confidence: float | None = None
    event_time: datetime | None = None

    def has_options(self) -> bool:
        return any(value is not None for value in (self.metadata, self.kind, self.key, self.confidence,
                                                   self.event_time))  # fmt: skip


@dataclass(frozen=True)
class ParsedInput:
    """``add()`` input split by meaning: strings and text items are memories, messages are conversation turns.
    ``rejected`` holds (index, reason) of the items refused with ``on_error="skip"``."""

    items: list[TextItem]
    messages: list[Message]
    rejected: list[tuple[int, str]] = field(default_factory=list)
    message_positions: list[int] = field(default_factory=list)  # input position of each message
    # the UTC offset each turn's own timestamp was written with, where it gave one: "+08:00" -> a turn of it (UTC)
    offsets: dict[timedelta, datetime] = field(default_factory=dict)

    @property
    def texts(self) -> list[str]:
        return [item.text for item in self.items]


def parse_input(
    data: AddInput, *, max_chars: int, max_batch: int, on_error: OnError = "raise", now: datetime | None = None
) -> ParsedInput:
    """Validate every item; a turn without a timestamp was said ``now`` (the memory's clock) when given.
    ``max_chars`` is the longest text accepted at all (the facade splits texts longer than the indexing limit
    into parts). With ``on_error="raise"`` the first bad item refuses the whole input;
    with ``"skip"`` bad items are left out and reported by position, and the rest is kept."""
    if on_error not in ("raise", "skip"):
        raise InvalidInputError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if isinstance(data, str | bytes | Message | Mapping):
        data = [data]  # type: ignore[list-item]
        single = True
    else:
        single = False
    if not isinstance(data, Sequence):
        raise InvalidInputError(f"add() takes text, a message dict, or a list of them; got {type(data).__name__}")
    if not data:
        raise InvalidInputError("add() got an empty list; pass at least one text or message")
    if len(data) > max_batch:
        raise InvalidInputError(f"add() got {len(data)} items, over limits.max_batch={max_batch}; split the batch")
    parsed = ParsedInput(items=[], messages=[])
    for position, entry in enumerate(data):
        label = "text" if single and isinstance(entry, str | bytes) else f"item {position}"
        try:
            if isinstance(entry, str | bytes):
                parsed.items.append(
                    TextItem(position, clean_text(entry, field=label, max_chars=max_chars, setting=WHOLE))
                )
            elif isinstance(entry, Mapping) and "text" in entry and "role" not in entry:
                parsed.items.append(parse_text_item(entry, position=position, max_chars=max_chars))
            else:
                # Untimed turns of one call were said in the order given: a millisecond apart, the last one now.
                said = None if now is None else now - timedelta(milliseconds=len(data) - 1 - position)
                parsed.messages.append(parse_message(entry, max_chars=max_chars, position=position, now=said))
                parsed.message_positions.append(position)
                if (offset := _offset_written(entry)) is not None:
                    parsed.offsets.setdefault(offset, parsed.messages[-1].timestamp)
        except InvalidInputError as exc:
            if on_error == "raise":
                raise
            parsed.rejected.append((position, str(exc)))
    if parsed.items and parsed.messages:
        raise InvalidInputError(
            "add() got both plain strings and messages in one list (text items count as strings); send them apart"
        )
    if not parsed.items and not parsed.messages:
        raise InvalidInputError(f"add() kept none of its {len(data)} items: {parsed.rejected[0][1]}")
    return parsed


def parse_text_item(entry: Mapping[str, Any], *, position: int, max_chars: int) -> TextItem:
    try:
        item = TextItemIn.model_validate(dict(entry))
    except ValidationError as exc:
        raise InvalidInputError(f"invalid item {position}: {describe_validation_error(exc)}") from None
    return TextItem(
        index=position,
        text=clean_text(item.text, field=f"item {position} text", max_chars=max_chars, setting=WHOLE),
        metadata=check_metadata(item.metadata, field=f"item {position} metadata") if item.metadata else None,
        kind=check_kind(item.kind) if item.kind is not None else None,
        key=check_key(item.key),
        confidence=item.confidence,
        event_time=clean_time(item.event_time, field=f"item {position} event_time"),
    )


def _offset_written(entry: object) -> timedelta | None:
    """The UTC offset a turn's timestamp was written with ("2025-03-03T20:00:00-08:00": -8 h), or None where it gave
    none (no timestamp, or one without a zone, read as UTC)."""
    stamp = entry.get("timestamp") if isinstance(entry, Mapping) else None
    if isinstance(stamp, str):
        try:
            stamp = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
    return stamp.utcoffset() if isinstance(stamp, datetime) else None


# How far ahead of our clock a turn's timestamp may be: a local time sent without its zone is read as UTC, up to 14
# hours ahead of the time it names.
_AHEAD = timedelta(days=1)


def _after(timestamp: datetime, now: datetime) -> bool:
    try:
        return timestamp > now + _AHEAD
    except OverflowError:  # now is within a day of the calendar's end: no time is later
        return False


def parse_message(entry: object, *, max_chars: int, position: int, now: datetime | None = None) -> Message:
    """A turn is stored verbatim. An empty one (a tool call, an image) is kept as a raw turn; it makes no episode."""
    if isinstance(entry, Message):
        message = entry
    elif isinstance(entry, Mapping):
        try:
            message = Message.model_validate(dict(entry))
        except ValidationError as exc:
            raise InvalidInputError(f"invalid message {position}: {describe_validation_error(exc)}") from None
    else:
        raise InvalidInputError(f"message {position} must be a dict with role and content, got {type(entry).__name__}")
    if now is not None and "timestamp" not in message.model_fields_set:
        message = message.model_copy(update={"timestamp": now})  # the injected clock, not the wall clock
    elif now is not None and _after(message.timestamp, now):  # dated 2099, it skewed every time question
        raise InvalidInputError(
            f"message {position}: timestamp {message.timestamp.isoformat()} is later than now; a turn is stored with "
            "the time it was said (leave timestamp out for now)"
        )
    field_name = f"message {position} content"
    if is_blank(message.content):  # kept as a raw turn, verbatim ("\u200b" too); it makes no episode
        content = check_string(message.content, field_name)
    else:
        content = clean_text(message.content, field=field_name, max_chars=max_chars, setting=WHOLE)
    return message.model_copy(update={"content": content}) if content != message.content else message


def check_metadata(metadata: Mapping[str, Any] | None, *, field: str = "metadata") -> JsonDict:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"{field} must be a dict, got {type(metadata).__name__}")
    check_strings(metadata, field)
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{field} must be JSON-serialisable: {exc}") from None
    result: JsonDict = json.loads(text)
    return result


def check_kind(kind: str) -> str:
    try:
        return validate_kind(kind)
    except ValueError as exc:
        raise InvalidInputError(str(exc)) from None


MAX_KEY_LENGTH = 512


def check_key(key: str | None) -> str | None:
    if key is None:
        return None
    if isinstance(key, str) and (problem := string_problem(key)) is not None:
        raise InvalidInputError(f"key {problem}")
    if isinstance(key, str) and len(key) > MAX_KEY_LENGTH:
        # PostgreSQL's index refuses a key row of ~2.7 KB, and the driver reported it as a lost connection (REST:
        # 503, "retry"); a key names a value, the value holds the text
        raise InvalidInputError(
            f"key is {len(key):,} characters; at most {MAX_KEY_LENGTH} (a key names a value: put long text in it)"
        )
    if not isinstance(key, str) or not looks_like_key(key):
        raise InvalidInputError(f"key {key!r} must be namespaced like 'project:category:entity' (2-8 parts, no spaces)")
    # One key in any case: "Vecdb:Dataset:Primary" added beside "vecdb:dataset:primary" made a second current value
    # that a lookup (which tries the lower-case form) and context() both returned.
    return key.lower()


def new_memory(
    scope: Scope,
    text: str,
    *,
    now: datetime,
    kind: str,
    metadata: JsonDict,
    provenance: Provenance,
    key: str | None = None,
    confidence: float = 1.0,
    event_time: datetime | None = None,
) -> MemoryItem:
    if not 0.0 <= confidence <= 1.0:
        raise InvalidInputError(f"confidence must be between 0 and 1, got {confidence}")
    return MemoryItem(
        id=new_id(),
        scope=scope,
        kind=kind,
        text=text,
        key=key,
        metadata=metadata,
        confidence=confidence,
        event_time=event_time,
        created_at=now,
        updated_at=now,
        valid_from=event_time or now,
        provenance=provenance,
    )


CONTEXT_TURNS = 2  # earlier turns indexed with each episode (bench/ranking_sweep.py measured 0 to 3)
CONTEXT_MAX_CHARS = 240  # per context turn: enough for the question a turn answers, cheap to embed
CONTEXT_MAX_GAP = timedelta(hours=6)  # turns further apart belong to different conversations


def turn_label(message: Message) -> str:
    """A turn as a reader sees it, with who spoke: ``name: text`` (or ``role: text``)."""
    return f"{message.name or message.role}: {message.content}"


def turn_context(message: Message, earlier: Sequence[Message]) -> str | None:
    """The turns just before ``message`` (oldest first) as its index context, one line each.

    One turn rarely holds a whole fact: "It was great, I learned so much" answers the turn before
    it. Indexing the previous turn with each episode lifted LoCoMo recall@10 from 0.61 to 0.72
    (bench/results). Turns more than ``CONTEXT_MAX_GAP`` apart are another conversation; a turn in
    another script (an English reply to a Chinese turn) is left out: mixed into the embedded text,
    it drowned the turn's own meaning and lost zh<->en matches in a bilingual chat.
    """
    lines: list[str] = []
    later = message
    own = scripts(message.content)
    for turn in reversed(earlier[-CONTEXT_TURNS:] if CONTEXT_TURNS else ()):
        if abs(later.timestamp - turn.timestamp) > CONTEXT_MAX_GAP:
            break
        if own and not own & scripts(turn.content):
            break  # a turn in another language would blur this one's meaning for the embedder
        label = turn_label(turn)
        lines.insert(0, label if len(label) <= CONTEXT_MAX_CHARS else label[: CONTEXT_MAX_CHARS - 1] + "…")
        later = turn
    return "\n".join(lines) or None


def episode_memories(
    messages: Sequence[Message],
    scope: Scope,
    metadata: JsonDict,
    now: datetime,
    *,
    previous: Sequence[Message] = (),
) -> list[MemoryItem]:
    """One episode per turn: the verbatim content, pointing back at its raw message.

    ``previous`` holds the turns stored in the scope just before these messages, oldest first (the
    facade passes the last ``CONTEXT_TURNS`` when turns arrive one ``add()`` at a time). Each
    episode keeps the turns before it as ``metadata["preceding_turns"]``, which
    :func:`memstrata.indexing.index_text` indexes with it; the memory's text stays the turn's own.
    """
    episodes = []
    earlier = list(previous)
    for message in messages:
        episode_metadata = {**metadata, "role": message.role}
        if message.name:
            episode_metadata["speaker"] = message.name
        if (context := turn_context(message, earlier)) is not None:
            episode_metadata["preceding_turns"] = context
        episodes.append(
            new_memory(
                scope,
                message.content,
                now=now,
                kind=MemoryKind.EPISODE.value,
                metadata=episode_metadata,
                provenance=Provenance(source="messages", message_ids=(message.id,)),
                event_time=message.timestamp,
            )
        )
        earlier.append(message)
    return episodes
