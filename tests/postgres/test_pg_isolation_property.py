"""The scope-isolation property of tests/test_isolation_property.py, on PostgreSQL."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from memstrata import Memory, NotFoundError, Scope
from memstrata.config import load_settings
from memstrata.storage.postgres.store import PostgresStore
from test_isolation_property import EVERY_STATUS, OPERATIONS, SCOPES, WORDS, _apply, _kwargs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, reader=SCOPES, query=WORDS)
def test_reads_and_writes_never_cross_scopes_on_postgres(
    pg_url: str, embedder: Any, operations: list[tuple[str, Scope, list[str]]], reader: Scope, query: str
) -> None:
    store = PostgresStore(pg_url, pool_size=2)
    store.reset()  # one database for every example, emptied in between
    memory = Memory(store, embedder, settings=load_settings({"store": {"path": pg_url}}))
    owned: dict[str, Scope] = {}
    try:
        for action, scope, words in operations:
            _apply(memory, owned, action, scope, words)
        read = _kwargs(reader)
        view = memory.for_tenant(reader.tenant_id)
        seen = [h.memory for h in view.search(query, **read, limit=50, filters=EVERY_STATUS)]
        seen += view.get_all(**read, limit=1000, filters=EVERY_STATUS)
        for item in seen:
            assert reader.contains(item.scope), f"{reader} saw a memory of {item.scope}"
        for memory_id, scope in owned.items():
            if reader.contains(scope):
                assert view.get(memory_id, **read).id == memory_id
            else:
                try:
                    view.get(memory_id, **read)
                except NotFoundError:
                    continue
                raise AssertionError(f"{reader} could get a memory of {scope}")
    finally:
        memory.close()
