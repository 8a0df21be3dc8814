"""Property: graph reads (entities, neighbours, paths, subgraphs, exports, graph-ranked search) never show
a node, an edge or a memory of a scope the reader does not contain, whatever was said by whom."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import Memory, NotFoundError, Scope
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore

IDS = st.one_of(st.none(), st.sampled_from(["a", "b"]))
SCOPES = (
    st.tuples(IDS, IDS, st.sampled_from([None, "acme"]))
    .filter(lambda ids: any(ids[:2]))
    .map(lambda ids: Scope(user_id=ids[0], agent_id=ids[1], tenant_id=ids[2]))
)
NAMES = st.sampled_from(["王总", "李女士", "张工", "后端 API", "红酒", "Dana", "Initech"])
SENTENCES = st.one_of(
    st.builds("{}的太太是{}".format, NAMES, NAMES),
    st.builds("{}喜欢{}".format, NAMES, NAMES),
    st.builds("{}负责{}".format, NAMES, NAMES),
    st.builds("{} depends on {}".format, NAMES, NAMES),
)
SAYINGS = st.lists(st.tuples(SCOPES, SENTENCES), min_size=1, max_size=8)


def _kwargs(scope: Scope) -> dict[str, str | None]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_id}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sayings=SAYINGS, reader=SCOPES, name=NAMES)
def test_graph_reads_never_cross_scopes(
    tmp_path_factory, embedder: UniversalSentenceEncoder, sayings, reader: Scope, name: str
) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("graph-iso") / "m.db"
    config = {"store": {"path": str(path)}, "write": {"background": False}}
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings(config))
    try:
        for scope, sentence in sayings:
            memory.for_tenant(scope.tenant_id).add(sentence, **_kwargs(scope), infer=True, wait=True)
        view, read = memory.for_tenant(reader.tenant_id), _kwargs(reader)
        graph = view.graph.subgraph(include_closed=True, **read)
        for record in [*graph.entities, *graph.relations]:
            assert reader.contains(record.scope), f"{reader} saw {record} of {record.scope}"
        exported = json.loads(view.graph.export("json", **read))
        assert {e["id"] for e in exported["entities"]} == {e.id for e in graph.entities}
        try:
            near = view.graph.neighbors(name, hops=3, **read)
        except NotFoundError:
            assert not any(name in e.names() for e in graph.entities)
        else:
            assert all(reader.contains(r.scope) for r in [*near.entities, *near.relations])
        for hit in view.search(f"{name}会影响什么", **read, limit=20):
            assert reader.contains(hit.memory.scope), f"{reader} found a memory of {hit.memory.scope}"
    finally:
        memory.close()
