"""Graph extraction from the model's answer, against the scripted OpenAI-compatible server (fixed replies
over real HTTP, no model behind it): the same call returns facts and triples; parsing, relation names,
dedup with the patterns, closing on "ended", and garbage that is retried and surfaced, never dropped."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata import JobFailedError, Memory
from memstrata.types import JobStatus
from support.scripted_llm import ScriptedServer, completion


def _answer(facts: list[str], relations: list[dict[str, Any]]) -> Any:
    return completion(
        {
            "facts": [{"text": f, "kind": "fact", "confidence": 0.9, "sources": [1]} for f in facts],
            "relations": relations,
        }
    )


def _rel(subject: str, relation: str, obj: str, **extra: Any) -> dict[str, Any]:
    return {"subject": subject, "subject_type": "person", "relation": relation, "object": obj,
            "object_type": "organization", "sources": [1], **extra}  # fmt: skip


def test_one_call_gives_facts_and_triples(scripted_memory: Memory, server: ScriptedServer) -> None:
    relations = [_rel("I", "Works For", "Initech"), _rel("I", "lives in", "Lisbon", object_type="location")]
    server.enqueue(_answer(["User works at Initech", "User lives in Lisbon"], relations))
    scripted_memory.add("I work at Initech. I live in Lisbon.", user_id="u1", infer=True, wait=True)

    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert "relations" in schema["properties"] and len(server.requests) == 1  # no second call for the graph
    edges = {(e.source, e.relation, e.target): e.record for e in scripted_memory.graph.subgraph(user_id="u1").edges()}
    assert set(edges) == {("user", "works_at", "Initech"), ("user", "lives_in", "Lisbon")}
    # The pattern extractor found "I live in Lisbon" too: one edge, the model's.
    assert edges[("user", "lives_in", "Lisbon")].metadata["origin"] == "llm:scripted"
    linked = scripted_memory.get_all(user_id="u1", filters={"kind": "fact"})
    work_fact = next(item for item in linked if item.text == "User works at Initech")
    assert work_fact.id in edges[("user", "works_at", "Initech")].memory_ids
    (job,) = scripted_memory.list_jobs(user_id="u1")
    assert job.result["graph"]["triples_from_model"] == 2 and job.result["graph"]["relations_added"] == 2


def test_we_is_the_user(scripted_memory: Memory, server: ScriptedServer) -> None:
    """The bundled model wrote ["We", "lives_in", "Denver"] for "We moved to Denver last week": "We" became a
    person of its own, and the user's home never changed."""
    server.enqueue(_answer(["User moved to Denver"], [_rel("We", "lives_in", "Denver", object_type="location")]))
    scripted_memory.add("We moved to Denver last week.", user_id="u1", infer=True, wait=True)
    edges = {(e.source, e.relation, e.target) for e in scripted_memory.graph.subgraph(user_id="u1").edges()}
    assert edges == {("user", "lives_in", "Denver")}


def test_the_models_ended_flag_closes_the_edge(scripted_memory: Memory, server: ScriptedServer) -> None:
    server.enqueue(_answer(["User works at Initech"], [_rel("I", "works_at", "Initech")]))
    scripted_memory.add("I work at Initech.", user_id="u1", infer=True, wait=True)
    server.enqueue(
        _answer(["User has left Initech"], [_rel("I", "works_at", "Initech", ended=True)]),
        completion({"answer": "conflict"}),  # the judge, asked about (works at Initech, has left Initech)
    )
    scripted_memory.add("I handed in my notice at Initech, last day was Friday.", user_id="u1", infer=True, wait=True)
    (edge,) = scripted_memory.graph.relation_history("I", user_id="u1")
    assert edge.target == "Initech" and not edge.record.current


def test_a_malformed_triple_is_retried_then_surfaced_with_the_raw_output(
    scripted_memory: Memory, server: ScriptedServer
) -> None:
    broken = _answer(["User works at Initech"], [{"subject": "", "relation": "works_at", "object": "Initech"}])
    server.enqueue(broken, broken, broken, broken)
    with pytest.raises(JobFailedError) as failure:
        scripted_memory.add("I work at Initech.", user_id="u1", infer=True, wait=True)
    (job,) = scripted_memory.list_jobs(user_id="u1")
    assert failure.value.jobs == [job] and job.status == JobStatus.FAILED
    assert job.raw_output and "Initech" in job.raw_output  # recorded for retry_job, not silently dropped
    assert scripted_memory.messages(user_id="u1")[0].message.content == "I work at Initech."
