"""The one way a memory's status changes: the change and its history event, in one write.

Used by delete, review (confirm / reject), archive / restore, forget and maintenance, so every status
change is recorded the same way and names the action that really happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memstrata.records.history import history_event
from memstrata.storage.protocol import ENDED, StatusChange, WriteBatch
from memstrata.types import HistoryAction, MemoryItem, MemoryStatus


def forgotten_batch(items: Sequence[MemoryItem], *, at: datetime, actor: str, reason: str) -> WriteBatch:
    """Deleted as if never true nor held: valid and recorded ranges closed where they began, so time travel
    (``as_of=``, ``known_at=``) does not bring a forgotten text back. History keeps the request."""
    changes = [StatusChange(item.id, item.scope, MemoryStatus.DELETED, at, valid_to=item.valid_from,
                            recorded_to=item.created_at) for item in items]  # fmt: skip
    return WriteBatch(
        status_changes=changes,
        history=[history_event(item, HistoryAction.DELETE, at=at, actor=actor, reason=reason) for item in items],
    )


def status_batch(
    items: Sequence[MemoryItem],
    status: MemoryStatus,
    action: HistoryAction,
    *,
    at: datetime,
    actor: str,
    reason: str | None,
    never_true: bool = False,
) -> WriteBatch:
    """Deleting closes a memory's validity (it stopped being true); archiving, confirming and restoring
    leave it open (cold or newly trusted is not untrue). ``never_true``: closed where it began (a rejected
    extraction was never true; closed at the rejection, time travel showed it as true until then)."""
    close = status in ENDED
    changes = [StatusChange(item.id, item.scope, status, at, close_validity=close,
                            valid_to=item.valid_from if never_true else None) for item in items]  # fmt: skip
    return WriteBatch(
        status_changes=changes,
        history=[history_event(item, action, at=at, actor=actor, reason=reason) for item in items],
    )


def confirmed_batch(item: MemoryItem, replaced: Sequence[MemoryItem], *, at: datetime, actor: str) -> WriteBatch:
    """A pending memory confirmed by a person, and the active memories it contradicted when it was extracted
    (write/apply.py held it back from replacing them: metadata ``would_replace``) superseded by it from the time it
    holds, as an UPDATE would have done."""
    confirmed = status_batch([item], MemoryStatus.ACTIVE, HistoryAction.CONFIRM, at=at, actor=actor,
                             reason="confirmed by a person")  # fmt: skip
    changes = [StatusChange(old.id, old.scope, MemoryStatus.SUPERSEDED, at,
                            valid_to=max(item.valid_from, old.valid_from)) for old in replaced]  # fmt: skip
    history = [history_event(item, HistoryAction.UPDATE, at=at, actor=actor, old_text=old.text,
                             reason=f"confirmed by a person; replaces {old.id}", details={"supersedes": old.id})
               for old in replaced]  # fmt: skip
    return WriteBatch(status_changes=[*confirmed.status_changes, *changes], history=[*confirmed.history, *history])
