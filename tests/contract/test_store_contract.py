"""The Store protocol, checked the same way on every backend (the ``store`` fixture is parametrised).

These tests speak to the store directly, without the facade, so a backend cannot pass by
accident of what Memory happens to call.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstrata import ConflictError, NotFoundError
from memstrata.indexing import content_hash
from memstrata.lexical import keyword_tokens
from memstrata.query import Filters, ListQuery, TimeRange
from memstrata.storage.protocol import StatusChange, Store, WriteBatch
from memstrata.types import (
    HistoryAction,
    HistoryEvent,
    MemoryItem,
    MemoryStatus,
    Message,
    Provenance,
    Scope,
    TenantScope,
    new_id,
)

T0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
ALICE = Scope(user_id="alice")


def item(text: str, scope: Scope = ALICE, *, at: datetime = T0, **fields: object) -> MemoryItem:
    values: dict[str, object] = {"kind": "fact", **fields}
    return MemoryItem.model_validate(
        {"id": new_id(), "scope": scope, "text": text, "created_at": at, "updated_at": at, "valid_from": at, **values}
    )


def added(item_: MemoryItem) -> HistoryEvent:
    return HistoryEvent(
        id=new_id(), memory_id=item_.id, scope=item_.scope, action=HistoryAction.ADD, old_text=None,
        new_text=item_.text, actor="test", reason=None, created_at=item_.created_at,
    )  # fmt: skip


def put(store: Store, *items: MemoryItem) -> list[MemoryItem]:
    store.write(WriteBatch(inserts=items, history=[added(i) for i in items]))
    return list(items)


def ids(found: list[MemoryItem]) -> set[str]:
    return {i.id for i in found}


def test_scope_matching_tenant_exact_and_absent_fields(store: Store) -> None:
    mine = put(store, item("a"), item("b", Scope(user_id="alice", agent_id="bot", session_id="s1")))
    put(store, item("c", Scope(user_id="bob")), item("d", Scope(user_id="alice", tenant_id="acme")))
    assert ids(store.list_memories(ListQuery(scope=ALICE))) == ids(mine)  # user scope sees all its agents/sessions
    assert ids(store.list_memories(ListQuery(scope=Scope(user_id="alice", agent_id="bot")))) == {mine[1].id}
    assert [i.text for i in store.list_memories(ListQuery(scope=Scope(user_id="alice", tenant_id="acme")))] == ["d"]
    assert store.list_memories(ListQuery(scope=Scope(agent_id="bot", tenant_id="acme"))) == []
    assert store.get(Scope(user_id="alice", tenant_id="acme"), [m.id for m in mine]) == []
    assert store.get(Scope(user_id="bob"), [mine[0].id]) == []
    got = store.get(ALICE, [mine[1].id, "missing", mine[0].id])
    assert [i.id for i in got] == [mine[1].id, mine[0].id]  # the caller's order
    assert got[0].scope == Scope(user_id="alice", agent_id="bot", session_id="s1")
    assert store.count(ALICE, Filters()) == 2 and store.count(Scope(user_id="alice", tenant_id="acme"), Filters()) == 1


def test_records_round_trip_exactly(store: Store) -> None:
    original = item(
        "喜欢靠窗的座位 (window seat)",
        Scope(user_id="u", agent_id="a", session_id="s", tenant_id="t"),
        key="trip:seat:pref", metadata={"n": 1, "x": 2.5, "ok": True, "none": None, "nested": {"k": ["v"]}},
        confidence=0.75, event_time=T0 - timedelta(days=3), valid_to=T0 + timedelta(days=1),
    )  # fmt: skip
    put(store, original)
    [back] = store.get(original.scope, [original.id])
    assert back == original
    assert back.created_at.tzinfo is not None and back.created_at.utcoffset() == timedelta(0)
    # Provenances are stored without their defaults; each part still comes back, and so does the default one.
    sourced = [
        item("from turns", provenance=Provenance(source="messages", message_ids=("m1", "m2"), said_at=T0)),
        item("from a page", provenance=Provenance(source="document", document="d1", span=(3, 40))),
        item("an import", provenance=Provenance(source="import")),
    ]
    put(store, *sourced)
    assert store.get(ALICE, [i.id for i in sourced]) == sourced
    assert original.provenance == Provenance()


def test_writes_are_all_or_nothing(store: Store) -> None:
    [first] = put(store, item("first"))
    with pytest.raises(ConflictError):
        store.write(
            WriteBatch(
                messages=[(Message(role="user", content="hello"), ALICE)],
                inserts=[item("second"), first],  # a duplicate id
            )
        )
    assert [i.text for i in store.list_memories(ListQuery(scope=ALICE))] == ["first"]
    assert store.messages(ALICE) == []


def test_optimistic_locking_on_updated_at(store: Store) -> None:
    [original] = put(store, item("coffee"))
    newer = original.model_copy(update={"text": "tea", "updated_at": T0 + timedelta(minutes=1)})
    store.write(WriteBatch(replacements=[(newer, original.updated_at)]))
    stale = original.model_copy(update={"text": "cocoa", "updated_at": T0 + timedelta(minutes=2)})
    with pytest.raises(ConflictError, match="changed by another writer"):
        store.write(WriteBatch(inserts=[item("side effect")], replacements=[(stale, original.updated_at)]))
    assert [i.text for i in store.list_memories(ListQuery(scope=ALICE))] == ["tea"]  # the insert rolled back
    ghost = item("ghost")
    with pytest.raises(NotFoundError):
        store.write(WriteBatch(replacements=[(ghost, ghost.updated_at)]))
    other = newer.model_copy(update={"scope": Scope(user_id="mallory"), "updated_at": T0 + timedelta(minutes=3)})
    with pytest.raises(NotFoundError):
        store.write(WriteBatch(replacements=[(other, newer.updated_at)]))


def test_status_changes_and_keys(store: Store) -> None:
    [keyed] = put(store, item("PostgreSQL 16", key="atlas:db:engine"))
    assert store.find_by_key(ALICE, "atlas:db:engine") == keyed
    assert store.find_by_key(Scope(user_id="bob"), "atlas:db:engine") is None
    assert store.find_by_key(Scope(user_id="alice", tenant_id="acme"), "atlas:db:engine") is None
    store.write(WriteBatch(status_changes=[StatusChange(keyed.id, ALICE, MemoryStatus.ARCHIVED, T0)]))
    assert store.find_by_key(ALICE, "atlas:db:engine") is None
    [archived] = store.get(ALICE, [keyed.id])
    assert archived.status == MemoryStatus.ARCHIVED and archived.valid_to == T0
    store.write(WriteBatch(status_changes=[StatusChange(keyed.id, ALICE, MemoryStatus.ACTIVE, T0, False)]))
    assert store.find_by_key(ALICE, "atlas:db:engine") is not None
    with pytest.raises(NotFoundError):
        store.write(WriteBatch(status_changes=[StatusChange(keyed.id, Scope(user_id="bob"), MemoryStatus.DELETED, T0)]))
    assert store.find_by_hash(ALICE, content_hash("postgresql  16")) == store.get(ALICE, [keyed.id])


def test_filters(store: Store) -> None:
    a = item("alpha", metadata={"project": "x", "n": 1, "flag": True}, event_time=T0 - timedelta(days=10))
    b = item("beta", metadata={"project": "y", "n": 2.5, "flag": False, "gone": None}, key="p:beta:v", kind="note")
    c = item("gamma", at=T0 + timedelta(hours=1), metadata={})
    put(store, a, b, c)

    def texts(**filters: object) -> set[str]:
        return {i.text for i in store.list_memories(ListQuery(scope=ALICE, filters=Filters.model_validate(filters)))}

    assert texts(metadata={"project": "x"}) == {"alpha"}
    assert texts(metadata={"n": 2.5}) == {"beta"} and texts(metadata={"n": 1}) == {"alpha"}
    assert texts(metadata={"flag": True}) == {"alpha"} and texts(metadata={"flag": False}) == {"beta"}
    assert texts(metadata={"gone": None}) == {"alpha", "beta", "gamma"}  # missing and null are alike
    assert texts(metadata={"project": None}) == {"gamma"}
    assert texts(kind=["note"]) == {"beta"} and texts(exclude_kind=["note"]) == {"alpha", "gamma"}
    assert texts(key_prefix="p:beta") == {"beta"} and texts(key_prefix="q:") == set()
    assert texts(has_key=True) == {"beta"} and texts(has_key=True, kind=["fact"]) == set()
    assert texts(created_at=TimeRange(gte=T0 + timedelta(minutes=30))) == {"gamma"}
    assert texts(event_time=TimeRange(lt=T0)) == {"alpha"}
    assert texts(valid_at=T0 + timedelta(minutes=1)) == {"alpha", "beta"}


def test_valid_time_and_record_time_are_separate_axes(store: Store) -> None:
    """An imported 2023 fact, superseded by a later turn: as_of (valid time) answers with the 2023 state whenever
    the store learned it; known_at (record time) answers with what the store held at that moment."""
    said = datetime(2023, 3, 1, tzinfo=UTC)
    changed = datetime(2023, 9, 1, tzinfo=UTC)
    live = Filters(status=(MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED))
    [old] = put(store, item("lives in Beijing", at=T0, valid_from=said))  # learned in 2025, true since 2023-03
    [new] = put(store, item("lives in Hangzhou", at=T0 + timedelta(hours=1), valid_from=changed))
    later = T0 + timedelta(hours=1)
    store.write(
        WriteBatch(status_changes=[StatusChange(old.id, ALICE, MemoryStatus.SUPERSEDED, later, valid_to=changed)])
    )
    [closed] = store.get(ALICE, [old.id])
    assert closed.valid_to == changed and closed.recorded_to == later and new.recorded_to is None

    def texts(**when: datetime) -> set[str]:
        filters = live.model_copy(update=when)
        return {i.text for i in store.list_memories(ListQuery(scope=ALICE, filters=filters))}

    assert texts(valid_at=datetime(2023, 6, 1, tzinfo=UTC)) == {"lives in Beijing"}
    assert texts(valid_at=datetime(2024, 1, 1, tzinfo=UTC)) == {"lives in Hangzhou"}
    assert texts(valid_at=datetime(2022, 1, 1, tzinfo=UTC)) == set()
    assert texts(known_at=T0 + timedelta(minutes=30)) == {"lives in Beijing"}
    assert texts(known_at=later + timedelta(minutes=1)) == {"lives in Hangzhou"}
    assert texts(known_at=T0 - timedelta(days=1)) == set()


def test_ordering_paging_and_nulls(store: Store) -> None:
    items = [item(f"n{i}", event_time=None if i % 2 else T0 + timedelta(days=i)) for i in range(6)]
    put(store, *items)  # equal created_at: storage order breaks ties

    def order(**query: object) -> list[str]:
        return [i.text for i in store.list_memories(ListQuery.model_validate({"scope": ALICE, **query}))]

    assert order(descending=False) == [f"n{i}" for i in range(6)]
    assert order(descending=False, limit=2, offset=2) == ["n2", "n3"]
    assert order(descending=True) == [f"n{i}" for i in reversed(range(6))]
    assert order(order_by="event_time", descending=False) == ["n1", "n3", "n5", "n0", "n2", "n4"]  # NULL first
    assert order(order_by="event_time", descending=True) == ["n4", "n2", "n0", "n5", "n3", "n1"]  # NULL last


def test_keyword_search_treats_text_literally_and_ranks(store: Store) -> None:
    put(
        store,
        item("coffee coffee coffee every morning"),
        item("coffee once"),
        item("it's a \\backslash 'quoted' | & ! :* (tokens)"),
        item("我最喜欢的饮料是乌龙茶"),
        item("coffee for bob", Scope(user_id="bob")),
    )

    def search(text: str, scope: Scope = ALICE) -> list[str]:
        hits = store.keyword_search(scope, keyword_tokens(text), Filters(), 10)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        return [i.text for i in store.get(scope, [h.memory_id for h in hits])]

    assert search("coffee")[0] == "coffee coffee coffee every morning" and len(search("coffee")) == 2
    assert search("coffee", Scope(user_id="bob")) == ["coffee for bob"]
    assert search("乌龙茶") == ["我最喜欢的饮料是乌龙茶"]
    for query in ["it's", "\\backslash", "'quoted'", "| & ! :*", "(tokens)", "' OR 1=1 --"]:
        search(query)  # never a syntax error
    assert search("backslash") == ["it's a \\backslash 'quoted' | & ! :* (tokens)"]
    assert store.keyword_search(ALICE, [], Filters(), 10) == []


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_vector_search_cosine_scope_and_embedding_identity(store: Store) -> None:
    near, far, archived = put(store, item("near"), item("far"), item("archived"))
    bob = put(store, item("bob's", Scope(user_id="bob")))[0]
    vectors = {near.id: unit(1, 0.1, 0), far.id: unit(0, 1, 0), archived.id: unit(1, 0, 0), bob.id: unit(1, 0, 0)}
    store.write(WriteBatch(vectors=list(vectors.items()), embedding_id="test:3"))
    store.write(WriteBatch(status_changes=[StatusChange(archived.id, ALICE, MemoryStatus.ARCHIVED, T0)]))
    assert store.embedding_id() == "test:3"

    hits = store.vector_search(ALICE, unit(1, 0, 0), Filters(), 10)
    assert [h.memory_id for h in hits] == [near.id, far.id]
    assert hits[0].score == pytest.approx(float(unit(1, 0.1, 0) @ unit(1, 0, 0)), abs=1e-5)
    assert hits[1].score == pytest.approx(0.0, abs=1e-5)
    assert [h.memory_id for h in store.vector_search(Scope(user_id="bob"), unit(1, 0, 0), Filters(), 10)] == [bob.id]
    everything = Filters(status=list(MemoryStatus))
    assert len(store.vector_search(ALICE, unit(1, 0, 0), everything, 10)) == 3
    assert [h.memory_id for h in store.vector_search(ALICE, unit(1, 0, 0), everything, 1)] == [archived.id]

    store.set_embedding_id("other:3")  # vectors of the old model stop being searched ...
    assert store.vector_search(ALICE, unit(1, 0, 0), Filters(), 10) == []
    pending = [i.id for batch in store.memories_needing_vectors("other:3", 2) for i in batch]
    assert sorted(pending) == sorted([near.id, far.id, archived.id, bob.id])
    store.write(WriteBatch(vectors=[(near.id, unit(0, 0, 1))], embedding_id="other:3"))  # ... until re-embedded
    assert [h.memory_id for h in store.vector_search(ALICE, unit(0, 0, 1), Filters(), 10)] == [near.id]
    assert near.id not in [i.id for batch in store.memories_needing_vectors("other:3", 10) for i in batch]


def test_embedding_cache_and_mismatch(store: Store) -> None:
    from memstrata.errors import EmbeddingMismatchError

    store.write(WriteBatch(cache_entries=[("h1", unit(1, 2)), ("h2", unit(2, 1))], embedding_id="m:2"))
    cached = store.cached_vectors("m:2", ["h1", "h3", "h1"])
    assert set(cached) == {"h1"} and np.allclose(cached["h1"], unit(1, 2))
    assert store.cached_vectors("n:2", ["h1"]) == {}
    with pytest.raises(EmbeddingMismatchError):
        store.write(WriteBatch(cache_entries=[("h3", unit(1, 1))], embedding_id="n:2"))


def test_record_access_purge_history_and_reset(store: Store) -> None:
    old, new = put(store, item("old version", key="k:v:x"), item("new version"))
    supersede = added(new).model_copy(update={"id": new_id(), "details": {"supersedes": old.id}})
    store.write(
        WriteBatch(history=[supersede], vectors=[(old.id, unit(1, 0)), (new.id, unit(0, 1))], embedding_id="e:2")
    )
    store.record_access(ALICE, [old.id, new.id], T0 + timedelta(hours=1))
    store.record_access(Scope(user_id="bob"), [old.id], T0)  # another scope: no effect
    assert [(i.access_count, i.last_accessed_at) for i in store.get(ALICE, [old.id])] == [(1, T0 + timedelta(hours=1))]
    assert [e.memory_id for e in store.history(ALICE, old.id)] == [old.id, new.id]  # versions that superseded it
    assert store.history(Scope(user_id="bob"), old.id) == []

    assert store.purge(Scope(user_id="bob"), [old.id]) == 0
    assert store.purge(ALICE, [old.id]) == 1
    assert store.get(ALICE, [old.id]) == [] and store.find_by_key(ALICE, "k:v:x") is None
    assert [e.memory_id for e in store.history(ALICE, old.id)] == [new.id]
    assert store.keyword_search(ALICE, ["old"], Filters(), 10) == []
    assert [h.memory_id for h in store.vector_search(ALICE, unit(1, 0), Filters(), 10)] == [new.id]
    assert store.stats(ALICE).vectors == 1

    store.write(WriteBatch(messages=[(Message(role="user", content="hi"), ALICE)]))
    store.reset()
    stats = store.stats()
    assert (stats.memories_by_status, stats.messages, stats.history_events, stats.vectors) == ({}, 0, 0, 0)
    assert store.embedding_id() is None and store.keyword_search(ALICE, ["new"], Filters(), 10) == []


def test_messages_stats_and_export(store: Store) -> None:
    late = Message(role="user", content="second", timestamp=T0 + timedelta(seconds=1))
    early = Message(role="assistant", content="first", timestamp=T0, name="bot")
    store.write(WriteBatch(messages=[(late, ALICE), (early, Scope(user_id="alice", session_id="s"))]))
    store.write(WriteBatch(messages=[(Message(role="user", content="bob's"), Scope(user_id="bob"))]))
    assert [m.message for m in store.messages(ALICE)] == [early, late]
    assert [m.message.content for m in store.messages_by_id(ALICE, [late.id, early.id])] == ["first", "second"]
    assert store.messages_by_id(Scope(user_id="bob"), [late.id]) == []
    [memory] = put(store, item("exported"))
    store.write(WriteBatch(vectors=[(memory.id, unit(1, 1))], embedding_id="e:2"))
    kinds = [kind for kind, _ in store.export_all()]
    assert kinds == ["memory", "vector", "history", "message", "message", "message"]
    stats = store.stats(ALICE)
    assert (stats.messages, stats.history_events, stats.vectors, stats.memories_by_kind) == (2, 1, 1, {"fact": 1})
    assert store.stats().messages == 3 and stats.schema_version >= 1 and stats.location == store.location


def test_stats_and_jobs_of_a_whole_tenant(store: Store) -> None:
    """`memstrata --tenant acme stats` failed: a tenant view that names no user had no scope to count in."""
    acme_alice, acme_bob = Scope(user_id="alice", tenant_id="acme"), Scope(user_id="bob", tenant_id="acme")
    put(store, item("acme alice", acme_alice), item("acme bob", acme_bob), item("default alice"))
    store.write(WriteBatch(messages=[(Message(role="user", content="hi"), acme_bob)]))
    acme = store.stats(TenantScope(tenant_id="acme"))
    assert (acme.memories_by_kind, acme.messages) == ({"fact": 2}, 1)
    assert store.stats(TenantScope()).memories_by_kind == {"fact": 1}  # the default tenant alone
    assert store.stats().memories_by_kind == {"fact": 3}
