"""The graph half of the Store protocol, on every backend: upserts, scope, closed edges, the SQL walk."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memstrata import ConflictError
from memstrata.records.graph import Entity, Relation
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import Scope, new_id

T0 = datetime(2025, 3, 1, 8, 0, tzinfo=UTC)
ALICE = Scope(user_id="alice")
BOB = Scope(user_id="bob")


def entity(name: str, scope: Scope = ALICE, kind: str = "person", **fields: object) -> Entity:
    return Entity.model_validate(
        {"id": new_id(), "scope": scope, "name": name, "type": kind, "created_at": T0, "updated_at": T0, **fields}
    )


def edge(source: Entity, relation: str, target: Entity, **fields: object) -> Relation:
    values: dict[str, object] = {"valid_from": T0, "created_at": T0, "updated_at": T0, **fields}
    return Relation.model_validate(
        {"id": new_id(), "scope": source.scope, "source_id": source.id, "relation": relation,
         "target_id": target.id, **values}
    )  # fmt: skip


def chain(store: Store, scope: Scope = ALICE) -> tuple[list[Entity], list[Relation]]:
    """a -knows-> b -knows-> c <-knows- d, plus e isolated."""
    a, b, c, d, e = (entity(name, scope) for name in "abcde")
    relations = [edge(a, "knows", b), edge(b, "knows", c), edge(d, "knows", c)]
    store.write(WriteBatch(entities=[a, b, c, d, e], relations=relations))
    return [a, b, c, d, e], relations


def test_entities_round_trip_with_aliases_vectors_and_scope(store: Store) -> None:
    company = entity("字节跳动", kind="organization", aliases=("字节",), message_ids=("m1",), metadata={"k": 1})
    vector = np.arange(4, dtype=np.float32) / 10
    store.write(WriteBatch(entities=[company], entity_vectors=[(company.id, vector)], embedding_id="test:4"))
    store.write(WriteBatch(entities=[entity("字节跳动", BOB, "organization")]))
    (got,) = store.graph_entities(ALICE)
    assert got == company
    assert list(store.entity_vectors(ALICE, "test:4")) == [company.id]
    np.testing.assert_allclose(store.entity_vectors(ALICE, "test:4")[company.id], vector)
    assert store.entity_vectors(ALICE, "other:4") == {}
    assert store.graph_entities(Scope(user_id="alice", tenant_id="acme")) == []
    assert store.graph_entities(BOB, [company.id]) == []  # another user cannot read it by id


def test_upsert_replaces_in_scope_and_refuses_another_scopes_id(store: Store) -> None:
    company = entity("字节跳动", kind="organization")
    store.write(WriteBatch(entities=[company]))
    renamed = company.model_copy(update={"aliases": ("字节", "ByteDance"), "updated_at": T0 + timedelta(days=1)})
    store.write(WriteBatch(entities=[renamed]))
    assert store.graph_entities(ALICE) == [renamed]
    with pytest.raises(ConflictError):
        store.write(WriteBatch(entities=[company.model_copy(update={"scope": BOB})]))
    assert store.graph_entities(BOB) == []


def test_merged_entities_leave_the_live_list_but_stay_readable_by_id(store: Store) -> None:
    kept, merged = entity("王总"), entity("王先生")
    store.write(WriteBatch(entities=[kept, merged.model_copy(update={"merged_into": kept.id})]))
    assert [e.id for e in store.graph_entities(ALICE)] == [kept.id]
    assert store.graph_entities(ALICE, [merged.id])[0].merged_into == kept.id


def test_relations_by_entity_and_closed_edges(store: Store) -> None:
    (a, b, c, _, _), (ab, bc, dc) = chain(store)
    closed = bc.model_copy(update={"valid_to": T0 + timedelta(days=3), "updated_at": T0 + timedelta(days=3)})
    store.write(WriteBatch(relations=[closed]))
    assert {r.id for r in store.graph_relations(ALICE, entity_ids=[b.id])} == {ab.id}
    assert {r.id for r in store.graph_relations(ALICE, entity_ids=[b.id], include_closed=True)} == {ab.id, bc.id}
    assert store.graph_relations(ALICE, relation_ids=[bc.id], include_closed=True) == [closed]
    assert {r.id for r in store.graph_relations(ALICE)} == {ab.id, dc.id}
    assert store.graph_relations(BOB, entity_ids=[a.id, b.id, c.id]) == []


def test_walk_goes_both_ways_and_reports_first_hop(store: Store) -> None:
    (a, _, c, d, e), (ab, bc, dc) = chain(store)
    assert {(r.id, hop) for r, hop in store.graph_walk(ALICE, [a.id], 1)} == {(ab.id, 1)}
    assert {(r.id, hop) for r, hop in store.graph_walk(ALICE, [a.id], 2)} == {(ab.id, 1), (bc.id, 2)}
    assert {(r.id, hop) for r, hop in store.graph_walk(ALICE, [a.id], 3)} == {(ab.id, 1), (bc.id, 2), (dc.id, 3)}
    assert {(r.id, hop) for r, hop in store.graph_walk(ALICE, [c.id], 1)} == {(bc.id, 1), (dc.id, 1)}
    walked = store.graph_walk(ALICE, [d.id, a.id], 2)
    assert [hop for _, hop in walked] == sorted(hop for _, hop in walked)  # nearest first
    assert store.graph_walk(ALICE, [e.id], 3) == []
    assert store.graph_walk(ALICE, [], 2) == []


def test_walk_skips_closed_edges_unless_asked_and_never_leaves_scope(store: Store) -> None:
    (a, b, c, _, _), (ab, bc, _) = chain(store)
    store.write(WriteBatch(relations=[bc.model_copy(update={"valid_to": T0 + timedelta(days=1)})]))
    assert {r.id for r, _ in store.graph_walk(ALICE, [a.id], 3)} == {ab.id}
    assert {r.id for r, _ in store.graph_walk(ALICE, [a.id], 2, include_closed=True)} == {ab.id, bc.id}
    # Bob's edge reuses Alice's entity ids as endpoints: a walk in Alice's scope must not follow it.
    foreign = edge(b, "knows", c).model_copy(update={"scope": BOB, "id": new_id()})
    store.write(WriteBatch(relations=[foreign]))
    assert foreign.id not in {r.id for r, _ in store.graph_walk(ALICE, [a.id], 3, include_closed=True)}
    assert [r.id for r, _ in store.graph_walk(BOB, [b.id], 2)] == [foreign.id]


def test_erase_scope_removes_graph_rows(store: Store) -> None:
    chain(store)
    chain(store, BOB)
    store.erase_scope(ALICE)
    counts = store.count_scope_rows(ALICE)
    assert counts.get("entities") == 0 and counts.get("relations") == 0
    assert store.graph_entities(ALICE) == [] and store.graph_relations(ALICE, include_closed=True) == []
    assert len(store.graph_entities(BOB)) == 5 and len(store.graph_relations(BOB)) == 3


def test_graph_rows_are_exported_and_counted(store: Store) -> None:
    chain(store)
    kinds = [kind for kind, _ in store.export_all()]
    assert kinds.count("entity") == 5 and kinds.count("relation") == 3
    extra = store.stats(ALICE).extra
    assert extra["entities"] == 5 and extra["relations"] == 3 and extra["closed_relations"] == 0
