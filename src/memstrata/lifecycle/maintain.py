"""Maintenance: expire stale pending facts, archive idle memories, hand idle sessions to the write path.

Every step scans in storage order and writes in small batches, each its own transaction, so a run
killed halfway leaves a consistent store and simply running it again finishes the work.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from memstrata.config import LifecycleSettings
from memstrata.lifecycle.status import status_batch
from memstrata.query import Filters
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import HistoryAction, JobStatus, MemoryItem, MemoryStatus, Scope

ACTOR = "maintenance"
BATCH = 200
# Kinds derived from files (vault notes, ingested documents): their lifecycle is the file's, so being idle
# never archives them; the next sync or re-ingestion is what changes them.
DERIVED_KINDS = frozenset({"note", "knowledge"})


@dataclass(frozen=True)
class MaintenanceReport:
    expired_pending: int
    archived: int
    sessions_released: int


def _scan(store: Store, filters: Filters) -> Iterator[list[MemoryItem]]:
    cursor = 0
    while page := store.scan_memories(filters, cursor, BATCH):
        cursor = page[-1][0]
        yield [item for _, item in page]


def _idle_days(item: MemoryItem, now: datetime) -> float:
    return (now - (item.last_accessed_at or item.created_at)).total_seconds() / 86_400


def move(
    store: Store, items: list[MemoryItem], status: MemoryStatus, action: HistoryAction, now: datetime, reason: str
) -> None:
    """One transaction: the status changes and their history rows, all or nothing."""
    store.write(status_batch(items, status, action, at=now, actor=ACTOR, reason=reason))


def expire_pending(store: Store, now: datetime, settings: LifecycleSettings, stop: Callable[[], bool]) -> int:
    cutoff = now - timedelta(days=settings.pending_ttl_days)
    done = 0
    for page in _scan(store, Filters(status=(MemoryStatus.PENDING,))):
        stale = [item for item in page if item.created_at < cutoff]
        if stale:
            reason = f"pending for over {settings.pending_ttl_days:g} days without confirmation"
            move(store, stale, MemoryStatus.DELETED, HistoryAction.DELETE, now, reason)
            done += len(stale)
        if stop():
            break
    return done


def archive_idle(store: Store, now: datetime, settings: LifecycleSettings, stop: Callable[[], bool]) -> int:
    done = 0
    for page in _scan(store, Filters(status=(MemoryStatus.ACTIVE,))):
        idle = [
            item
            for item in page
            if item.kind not in DERIVED_KINDS and _idle_days(item, now) >= settings.archive_after(item.kind)
        ]
        if idle:
            move(store, idle, MemoryStatus.ARCHIVED, HistoryAction.ARCHIVE, now, "not accessed for a long time")
            done += len(idle)
        if stop():
            break
    return done


def release_idle_sessions(store: Store, now: datetime, settings: LifecycleSettings) -> list[Scope]:
    """Turns still waiting for the trigger policy are handed to the write path once a session goes quiet; the
    sessions released."""
    cutoff = now - timedelta(minutes=settings.session_ttl_minutes)
    waiting = store.list_jobs(None, [JobStatus.WAITING], limit=100_000)
    scopes = sorted({job.scope for job in waiting if job.updated_at < cutoff}, key=lambda s: s.label())
    if scopes:
        store.write(WriteBatch(release_waiting=scopes))
    return scopes


def run_maintenance(
    store: Store,
    now: datetime,
    settings: LifecycleSettings,
    stop: Callable[[], bool] = lambda: False,
    on_released: Callable[[list[Scope]], None] = lambda scopes: None,
) -> MaintenanceReport:
    """``stop`` is polled between batches (a deadline, a signal): stopping early is always safe. ``on_released``
    hears of the idle sessions handed to the write path (the facade summarises them, as ending them does)."""
    expired = expire_pending(store, now, settings, stop)
    archived = 0 if stop() else archive_idle(store, now, settings, stop)
    released = [] if stop() else release_idle_sessions(store, now, settings)
    if released:
        on_released(released)
    return MaintenanceReport(expired_pending=expired, archived=archived, sessions_released=len(released))
