"""The earlier text of a memory edited in place, kept as a closed version for time travel.

A new value for a key and a text change through ``update()`` keep the memory's id (callers hold it), so
the text they replace would otherwise live only in history, where ``as_of=`` and ``known_at=`` searches do
not look. The edit therefore also stores the old text as a closed version: a copy with its own id, status
superseded, valid and recorded until the edit, pointing at the memory (``superseded_by``). The memory
itself becomes a new version: valid and recorded from the edit on. Metadata-only edits change no fact and
keep no version.
"""

from __future__ import annotations

from datetime import datetime

from memstrata.records.history import history_event
from memstrata.types import HistoryAction, HistoryEvent, MemoryItem, MemoryStatus, new_id


def kept_version(old: MemoryItem, now: datetime, *, valid_to: datetime | None = None) -> MemoryItem:
    """``old`` as a closed version of itself: held until ``now``, true until ``valid_to`` (default ``now``: when
    the edit says the new value became true), then replaced by the edit."""
    return old.model_copy(
        update={
            "id": new_id(),
            "status": MemoryStatus.SUPERSEDED,
            "valid_to": max(valid_to or now, old.valid_from),
            "recorded_to": now,
            "updated_at": now,
            "metadata": {**old.metadata, "superseded_by": old.id},
        }
    )


def kept_version_event(kept: MemoryItem, *, actor: str) -> HistoryEvent:
    """The history of a kept version: stored (ADD) at the edit, as the text the memory had before it."""
    memory_id = kept.metadata["superseded_by"]
    return history_event(kept, HistoryAction.ADD, at=kept.recorded_to or kept.updated_at, actor=actor,
                         reason=f"the text of {memory_id} before an edit, kept as a closed version",
                         details={"superseded_by": memory_id})  # fmt: skip


def edited_version(new: MemoryItem, now: datetime, *, valid_from: datetime | None = None) -> MemoryItem:
    """The memory after an edit of its text: the current version, recorded from ``now`` and valid from
    ``valid_from`` (default ``now``)."""
    return new.model_copy(update={"created_at": now, "valid_from": valid_from or now, "valid_to": None,
                                  "recorded_to": None})  # fmt: skip
