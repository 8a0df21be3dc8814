"""What ``add`` / ``update`` / ``delete`` write, as plans over the core: the facade validates, these build
the records and commit them in the order the principles ask (raw turns first, then vectors)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from memstrata.errors import InvalidInputError, ProviderError
from memstrata.facade.core import MemoryCore
from memstrata.indexing import index_text
from memstrata.storage.protocol import WriteBatch
from memstrata.types import (
    AddResult,
    HistoryAction,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    Provenance,
    Scope,
    as_utc,
)
from memstrata.validation import clean_text
from memstrata.write.ingest import (
    ParsedInput,
    check_key,
    check_kind,
    check_metadata,
    episode_memories,
    history_event,
    new_memory,
)


@dataclass(frozen=True)
class TextOptions:
    """How plain texts become memories. Only meaningful for text input without inference."""

    kind: str = MemoryKind.FACT.value
    key: str | None = None
    confidence: float = 1.0
    event_time: datetime | None = None

    @classmethod
    def checked(
        cls, kind: str | None, key: str | None, confidence: float | None, event_time: datetime | None
    ) -> TextOptions:
        return cls(
            kind=check_kind(kind) if kind is not None else MemoryKind.FACT.value,
            key=check_key(key),
            confidence=1.0 if confidence is None else confidence,
            event_time=as_utc(event_time) if event_time is not None else None,
        )


def refuse_ignored_options(parsed: ParsedInput, *, infer: bool, given: Mapping[str, object]) -> None:
    """Options that would be silently ignored are refused instead (issue: add() arguments that contradict)."""
    named = [name for name, value in given.items() if value is not None]
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
    items = episode_memories(parsed.messages, scope, metadata, now)
    history = [history_event(item, HistoryAction.ADD, at=now, actor=actor) for item in items]
    core.store.write(WriteBatch(messages=[(m, scope) for m in parsed.messages], inserts=items, history=history))
    try:
        core.store.write(core.vector_batch(items))
    except ProviderError as exc:
        raise ProviderError(
            f"stored {len(parsed.messages)} raw turns as {len(items)} episodes, but embedding failed "
            f"({exc}); they are keyword-searchable now; run `memstrata reindex` to add their vectors"
        ) from exc
    return AddResult(
        results=tuple(MemoryEvent(id=item.id, event="ADD", memory=item.text, kind=item.kind) for item in items),
        message_ids=tuple(m.id for m in parsed.messages),
    )


def add_texts(
    core: MemoryCore, texts: list[str], scope: Scope, metadata: dict[str, Any], options: TextOptions, actor: str
) -> AddResult:
    """Plain texts are not conversation turns: embed first, then write all or nothing."""
    now = core.clock()
    items = [
        new_memory(scope, text, now=now, kind=options.kind, metadata=metadata, key=options.key,
                   confidence=options.confidence, event_time=options.event_time, provenance=Provenance(source="api"))
        for text in texts
    ]  # fmt: skip
    history = [history_event(item, HistoryAction.ADD, at=now, actor=actor) for item in items]
    core.store.write(replace(core.vector_batch(items), inserts=items, history=history))
    return AddResult(
        results=tuple(MemoryEvent(id=item.id, event="ADD", memory=item.text, kind=item.kind) for item in items)
    )


def updated_version(
    core: MemoryCore, old: MemoryItem, text: str | None, metadata: Mapping[str, Any] | None
) -> MemoryItem:
    changes: dict[str, Any] = {"updated_at": core.clock()}
    if text is not None:
        changes["text"] = clean_text(text, max_chars=core.settings.limits.max_text_chars)
    if metadata is not None:
        changes["metadata"] = {**old.metadata, **check_metadata(metadata)}
    return old.model_copy(update=changes)


def write_update(core: MemoryCore, old: MemoryItem, new: MemoryItem, *, actor: str, reason: str | None) -> None:
    """Edit in place (same id), re-embedding only when the indexed text changed; history keeps the old text."""
    event = history_event(new, HistoryAction.UPDATE, at=new.updated_at, actor=actor, old_text=old.text, reason=reason)
    vectors = core.vector_batch([new]) if index_text(new) != index_text(old) else WriteBatch()
    core.store.write(replace(vectors, replacements=[(new, old.updated_at)], history=[event]))
