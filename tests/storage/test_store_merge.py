"""Merging writes (``WriteBatch.skip_identical``), on every backend: rows already stored as they are are skipped,
so an export imported into its own store merges; a stored row with the same id and other content is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TypeVar

import pytest

from memstrata import ConflictError
from memstrata.query import Filters, ListQuery
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import JobUpdate, Store, WriteBatch
from memstrata.types import (
    HistoryAction,
    HistoryEvent,
    Job,
    JobStatus,
    MemoryItem,
    Message,
    Scope,
    StoredMessage,
    new_id,
)

T = TypeVar("T")
T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
ALICE = Scope(user_id="alice")


def everything() -> WriteBatch:
    fact = MemoryItem(id=new_id(), scope=ALICE, kind="fact", text="住在杭州", metadata={"n": 1}, created_at=T0,
                      updated_at=T0, valid_from=T0)  # fmt: skip
    added = HistoryEvent(id=new_id(), memory_id=fact.id, scope=ALICE, action=HistoryAction.ADD, old_text=None,
                         new_text=fact.text, actor="test", reason=None, created_at=T0)  # fmt: skip
    city = Entity(id=new_id(), scope=ALICE, name="杭州", type="place", created_at=T0, updated_at=T0)
    alice = Entity(id=new_id(), scope=ALICE, name="Alice", type="person", created_at=T0, updated_at=T0)
    lives = Relation(id=new_id(), scope=ALICE, source_id=alice.id, relation="lives_in", target_id=city.id,
                     valid_from=T0, created_at=T0, updated_at=T0)  # fmt: skip
    job = Job(id=new_id(), kind="extract", scope=ALICE, status=JobStatus.QUEUED, message_ids=("m1",), created_at=T0,
              updated_at=T0)  # fmt: skip
    return WriteBatch(
        messages=[(Message(role="user", content="我住在杭州", timestamp=T0), ALICE)],
        inserts=[fact],
        history=[added],
        entities=[city, alice],
        relations=[lives],
        jobs=[job],
    )


def snapshot(store: Store) -> tuple[object, ...]:
    return (
        store.list_memories(ListQuery(scope=ALICE)),
        [event for item in store.list_memories(ListQuery(scope=ALICE)) for event in store.history(ALICE, item.id)],
        store.messages(ALICE),
        store.graph_entities(ALICE),
        store.graph_relations(ALICE),
        [(job.id, job.message_ids) for job in store.list_jobs(ALICE, list(JobStatus), 10)],
    )


def test_writing_the_same_rows_again_merges(store: Store) -> None:
    batch = everything()
    store.write(batch)
    before = snapshot(store)
    with pytest.raises(ConflictError, match="a message with this id already exists"):
        store.write(batch)  # without the flag, a second write is refused whole ...
    store.write(WriteBatch(**{**batch.__dict__, "skip_identical": True}))  # ... with it, nothing changes
    assert snapshot(store) == before


def test_use_counters_and_job_progress_are_not_content(store: Store) -> None:
    batch = everything()
    store.write(batch)
    store.record_access(ALICE, [batch.inserts[0].id], T0 + timedelta(hours=1))
    job = batch.jobs[0]
    store.write(WriteBatch(job_updates=[JobUpdate(job.id, JobStatus.DONE, T0 + timedelta(hours=1))]))
    store.write(WriteBatch(inserts=batch.inserts, jobs=batch.jobs, skip_identical=True))
    [item] = store.list_memories(ListQuery(scope=ALICE))
    assert item.access_count == 1 and store.list_jobs(ALICE, [JobStatus.DONE], 10)[0].id == job.id


def test_a_different_row_with_a_stored_id_is_a_conflict_and_nothing_is_written(store: Store) -> None:
    batch = everything()
    store.write(batch)
    fact = batch.inserts[0]
    fresh = MemoryItem(id=new_id(), scope=ALICE, kind="fact", text="new", created_at=T0, updated_at=T0, valid_from=T0)
    changes = {
        "inserts": [fact.model_copy(update={"text": "住在上海"}), fresh],
        "messages": [(batch.messages[0][0].model_copy(update={"content": "我住在上海"}), ALICE)],
        "entities": [batch.entities[0].model_copy(update={"aliases": ("临安",)})],
    }
    for field, rows in changes.items():
        with pytest.raises(ConflictError, match="already stored with other content"):
            store.write(WriteBatch(**{field: rows}, skip_identical=True))
    assert store.count(ALICE, Filters()) == 1 and store.get(ALICE, [fact.id])[0].text == "住在杭州"
    assert [turn.message.content for turn in store.messages(ALICE)] == ["我住在杭州"]


def test_an_export_merges_into_the_store_it_came_from(store: Store) -> None:
    store.write(everything())
    before = snapshot(store)
    records = list(store.export_all())

    def of(kind: type[T]) -> list[T]:
        return [record for _, record in records if isinstance(record, kind)]

    turns = [(turn.message, turn.scope) for turn in of(StoredMessage)]
    store.write(WriteBatch(messages=turns, inserts=of(MemoryItem), history=of(HistoryEvent), entities=of(Entity),
                           relations=of(Relation), skip_identical=True))  # fmt: skip
    assert snapshot(store) == before
