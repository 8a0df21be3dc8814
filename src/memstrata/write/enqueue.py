"""add(infer=True): store the raw turns and their episodes, and queue a job — no model runs here.

Whether the job is queued now or waits for more turns is the trigger policy's call. Everything is
one transaction, so a turn is never stored without its job, nor a job without its turns.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memstrata.config import WriteSettings
from memstrata.records.history import history_event
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import HistoryAction, Job, JobStatus, MemoryItem, Message, Scope, new_id
from memstrata.write.trigger import should_trigger


def plan_infer(
    store: Store,
    scope: Scope,
    turns: Sequence[Message],
    episodes: Sequence[MemoryItem],
    *,
    settings: WriteSettings,
    now: datetime,
    actor: str,
) -> tuple[WriteBatch, Job]:
    waiting = [job for job in store.list_jobs(scope, [JobStatus.WAITING], limit=1000) if job.scope == scope]
    waiting_turns = sum(len(job.message_ids) for job in waiting)
    triggered = should_trigger(settings.trigger, turns, waiting_turns, settings.every_n)
    job = Job(
        id=new_id(),
        kind="extract",
        scope=scope,
        status=JobStatus.QUEUED if triggered else JobStatus.WAITING,
        message_ids=tuple(turn.id for turn in turns),
        result={"episode_ids": [item.id for item in episodes]},
        created_at=now,
        updated_at=now,
    )
    batch = WriteBatch(
        messages=[(turn, scope) for turn in turns],
        inserts=episodes,
        history=[history_event(item, HistoryAction.ADD, at=now, actor=actor) for item in episodes],
        jobs=[job],
        release_waiting=[scope] if triggered and waiting else [],
    )
    return batch, job
