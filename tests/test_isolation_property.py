"""Property: across random tenants, scopes and operations, no read or write crosses into another scope."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memstrata import ConflictError, Memory, NotFoundError, Scope
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore

IDS = st.one_of(st.none(), st.sampled_from(["a", "b", "c"]))
TENANTS = st.sampled_from([None, "acme", "globex"])
SCOPES = (
    st.tuples(IDS, IDS, IDS, TENANTS)
    .filter(lambda ids: any(ids[:3]))
    .map(lambda ids: Scope(user_id=ids[0], agent_id=ids[1], session_id=ids[2], tenant_id=ids[3]))
)


def _kwargs(scope: Scope) -> dict[str, str | None]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_id, "session_id": scope.session_id}


WORDS = st.sampled_from(["coffee", "tea", "北京", "上海", "violin", "猫", "dog", "travel"])
OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["add", "update", "delete"]), SCOPES, st.lists(WORDS, min_size=1, max_size=4)),
    min_size=1,
    max_size=12,
)
EVERY_STATUS = {"status": ["active", "pending", "archived", "deleted"]}


def _apply(root: Memory, owned: dict[str, Scope], action: str, scope: Scope, words: list[str]) -> None:
    memory, kwargs = root.for_tenant(scope.tenant_id), _kwargs(scope)
    if action == "add" or not owned:
        for event in memory.add(" ".join(words), **kwargs).results:
            owned[event.id] = scope
        return
    target = sorted(owned)[len(words) % len(owned)]
    visible = scope.contains(owned[target])
    try:
        if action == "update":
            memory.update(target, " ".join(words), **kwargs)
        else:
            memory.delete(target, **kwargs)
    except NotFoundError:
        assert not visible, "a write inside the caller's scope was refused"
    except ConflictError as exc:  # updating an already deleted memory: refused (409), but it was in scope
        assert visible and "deleted" in str(exc)
    else:
        assert visible, f"{scope} wrote to a memory owned by {owned[target]}"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, reader=SCOPES, query=WORDS)
@example(  # found in a clean-clone run: updating a memory deleted earlier in the same scope is a conflict
    operations=[(action, Scope(session_id="a"), ["coffee"]) for action in ("add", "delete", "update")],
    reader=Scope(session_id="a"),
    query="coffee",
)
def test_reads_and_writes_never_cross_scopes(
    tmp_path_factory, embedder: UniversalSentenceEncoder, operations, reader: Scope, query: str
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("iso") / "m.db"
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))
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
