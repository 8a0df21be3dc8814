"""The Retriever-Evaluator loop over real stores (SQLite and PostgreSQL) with a scripted model: it stops when
the evaluator is satisfied, when a round finds nothing new, or at the round limit; a model failing mid-loop is
replaced by the heuristic and recorded; deep search never leaves the caller's scope."""

from __future__ import annotations

import itertools

from tests.deep.conftest import MakeDeep
from tests.deep.oracle import DeepOracle

from memstrata import Memory
from support.scripted_llm import ScriptedServer

FACTS = [
    "Caroline painted a sunset over the lake.",
    "Melanie went camping in the mountains in July.",
    "Bob works as a nurse at the city hospital.",
    "Alice's cat is named Tom.",
    "Dave plays the violin in an orchestra.",
    "Erin grows tomatoes on her balcony.",
]
NEXT = ["Melanie camping mountains", "Bob nurse hospital", "Alice cat Tom", "Dave violin orchestra",
        "Erin tomatoes balcony"]  # fmt: skip
PLAIN = {"deep": {"multi_query": False, "hyde": False, "understand": False}}


def seed(memory: Memory, user: str = "u1") -> None:
    memory.add(FACTS, user_id=user)


def endless_evaluator() -> object:
    """Never satisfied; each round asks for a different memory, so every round brings new evidence."""
    queries = itertools.cycle(NEXT)
    return lambda _prompt: {"sufficient": False, "missing": "more", "next_query": next(queries)}


def test_sufficient_at_round_one_stops(make_deep: MakeDeep, server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"evaluate": {"sufficient": True}})
    memory = make_deep(oracle.chat(), **PLAIN)
    seed(memory)
    result = memory.deep_search("What did Caroline paint?", user_id="u1")
    assert result.hits[0].memory.text == FACTS[0]
    trace = result.trace
    assert trace.stopped == "sufficient" and len(trace.rounds) == 1
    assert trace.rounds[0].verdict is not None and trace.rounds[0].verdict.source == "model"
    assert oracle.count("evaluate") == 1 and trace.model_calls == 1
    assert trace.prompt_tokens == 20 and trace.completion_tokens == 5 and trace.fallbacks == 0
    assert trace.seconds >= trace.model_seconds >= 0


def test_never_sufficient_stops_at_the_round_limit(make_deep: MakeDeep, server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"evaluate": endless_evaluator()})
    memory = make_deep(oracle.chat(), **PLAIN)
    seed(memory)
    chat = memory.deep_search("What did Caroline paint?", user_id="u1", limit=10)
    assert chat.trace.stopped == "round_limit" and len(chat.trace.rounds) == 3 == chat.trace.max_rounds
    assert oracle.count("evaluate") == 2  # the last round is not judged: nothing could follow it
    assert [run.origin for run in chat.trace.rounds[1].queries] == ["evaluator"]
    agent = memory.deep_search("What did Caroline paint?", user_id="u1", limit=10, audience="agent")
    assert agent.trace.stopped == "round_limit" and len(agent.trace.rounds) == 5
    found = {hit.memory.text for hit in agent.hits}
    assert {FACTS[0], FACTS[3], FACTS[4], FACTS[5]} <= found  # what this run's evaluator went looking for


def test_a_round_without_new_evidence_stops(make_deep: MakeDeep, server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"evaluate": {"sufficient": False, "missing": "x", "next_query": "Caroline sunset"}})
    memory = make_deep(oracle.chat(), **PLAIN)
    seed(memory)
    trace = memory.deep_search("What did Caroline paint?", user_id="u1").trace
    assert trace.stopped == "no_new_evidence" and len(trace.rounds) == 2


def test_evaluator_garbage_falls_back_and_is_recorded(make_deep: MakeDeep, server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"evaluate": "sufficient!!! (not JSON)"})
    memory = make_deep(oracle.chat(), **PLAIN)
    seed(memory)
    result = memory.deep_search("What did Caroline paint?", user_id="u1")
    verdict = result.trace.rounds[0].verdict
    assert verdict is not None and verdict.source == "heuristic"
    evaluated = [step for step in result.trace.steps if step.step == "evaluate"]
    assert evaluated and all(step.fallback for step in evaluated) and result.trace.fallbacks == len(evaluated)
    assert result.hits[0].memory.text == FACTS[0]  # the search itself is unharmed


def test_model_failing_mid_loop_falls_back(make_deep: MakeDeep, server: ScriptedServer) -> None:
    answers = iter([{"sufficient": False, "missing": "x", "next_query": "Bob nurse hospital"}])
    oracle = DeepOracle(server, {"evaluate": lambda _p: next(answers, "<html>502</html>")})
    memory = make_deep(oracle.chat(), **PLAIN)
    seed(memory)
    trace = memory.deep_search("What did Caroline paint?", user_id="u1").trace
    sources = [r.verdict.source for r in trace.rounds if r.verdict is not None]
    assert sources[0] == "model" and "heuristic" in sources[1:]


def test_without_a_model_every_step_is_heuristic(make_deep: MakeDeep) -> None:
    memory = make_deep(None)
    seed(memory)
    query = "ugh, long week. anyway, quick question: what did Caroline paint?"
    result = memory.deep_search(query, user_id="u1")
    trace = result.trace
    assert trace.model_calls == 0 and trace.understanding.question == "what did Caroline paint?"
    assert {step.source for step in trace.steps} == {"heuristic"}
    assert result.hits[0].memory.text == FACTS[0]
    assert [hit.id for hit in memory.search(query, user_id="u1", mode="deep")] == [hit.id for hit in result.hits]


def test_deep_mode_never_crosses_scope(make_deep: MakeDeep, server: ScriptedServer) -> None:
    secret = "Caroline's bank PIN is 4321."
    oracle = DeepOracle(server, {
        "understand": {"question": "What is Caroline's bank PIN?", "sub_questions": []},
        "multi_query": {"queries": ["Caroline bank PIN", "PIN 4321"]},
        "hyde": {"memory": secret},
        "evaluate": {"sufficient": False, "missing": "the PIN", "next_query": "bank PIN 4321"},
    })  # fmt: skip
    memory = make_deep(oracle.chat(), deep={"step_back": True})
    seed(memory, "u1")
    memory.add(secret, user_id="u2")
    memory.add("Caroline keeps a diary.", user_id="u1", agent_id="other-agent")
    hits = memory.search("What is Caroline's bank PIN?", user_id="u1", mode="deep", threshold=0.0)
    assert hits and all(hit.memory.scope.user_id == "u1" for hit in hits)
    assert secret not in {hit.memory.text for hit in hits}
    other = memory.search("Caroline diary", user_id="u1", agent_id="a1", mode="deep", threshold=0.0)
    assert "Caroline keeps a diary." not in {hit.memory.text for hit in other}
