"""Each deep step against a scripted model (the scripted OpenAI-compatible server, tests/support): the model's
answer is used when it is usable, and the offline heuristic stands in, recorded, when it is not."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.deep.oracle import DeepOracle

from memstrata.deep.evaluate import evaluate
from memstrata.deep.expand import expand
from memstrata.deep.understand import heuristic_understanding, understand
from support.scripted_llm import ScriptedServer

NOW = datetime(2026, 1, 10, tzinfo=UTC)
QUERY = "哎呀最近好忙。对了，我女儿的钢琴老师叫什么？还有，她每周几上课？"


def test_understand_uses_the_models_question_and_keeps_checked_entities(server: ScriptedServer) -> None:
    reply = {"question": "女儿的钢琴老师叫什么名字？", "entities": ["钢琴老师", "Paris"], "sub_questions": []}
    oracle = DeepOracle(server, {"understand": reply})
    understood, step = understand(QUERY, NOW, oracle.chat(), use_model=True, max_tokens=200)
    assert understood.source == "model" and understood.question == "女儿的钢琴老师叫什么名字？"
    assert "Paris" not in understood.entities  # the query never names it
    assert understood.sub_questions  # the model gave none: the heuristic split stays
    assert step.source == "model" and step.calls == 1 and step.fallback is None
    assert step.prompt_tokens == 20 and step.completion_tokens == 5
    assert "我女儿的钢琴老师" in server.user_prompts()[0]  # asked in the query's own language


def test_understand_refuses_a_translated_question(server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"understand": {"question": "What is the piano teacher's name?"}})
    understood, step = understand(QUERY, NOW, oracle.chat(), use_model=True, max_tokens=200)
    assert understood == heuristic_understanding(QUERY, NOW)
    assert step.source == "heuristic" and step.fallback is not None and "language" in step.fallback


def test_understand_garbage_falls_back_and_is_recorded(server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"understand": "I am not JSON at all"})
    understood, step = understand(QUERY, NOW, oracle.chat(), use_model=True, max_tokens=200)
    assert understood.source == "heuristic"
    assert step.fallback is not None and step.calls == 1
    assert oracle.count("understand") == 2  # the client's repair attempt, then the heuristic


def test_understand_without_a_model_runs_the_heuristic() -> None:
    understood, step = understand(QUERY, NOW, None, use_model=True, max_tokens=200)
    assert understood.question == "我女儿的钢琴老师叫什么？还有，她每周几上课？"
    assert understood.sub_questions == ("我女儿的钢琴老师叫什么？", "她每周几上课？")
    assert step.calls == 0 and step.source == "heuristic" and step.fallback is None


def test_each_expansion_uses_the_model_in_the_query_language(server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {
        "multi_query": {"queries": ["女儿 钢琴 老师 名字", "the piano teacher", "孩子的钢琴课老师"]},
        "hyde": {"memory": "女儿的钢琴老师是李老师。"},
        "step_back": {"question": "女儿学钢琴的情况"},
    })  # fmt: skip
    understood = heuristic_understanding(QUERY, NOW)
    multi = expand("multi_query", understood, oracle.chat(), paraphrases=2, max_tokens=200)
    assert multi.queries == ("女儿 钢琴 老师 名字", "孩子的钢琴课老师")  # the English one is refused
    assert multi.step.source == "model"
    hyde = expand("hyde", understood, oracle.chat(), paraphrases=2, max_tokens=200)
    assert hyde.queries == ("女儿的钢琴老师是李老师。",) and hyde.origin == "hyde"
    back = expand("step_back", understood, oracle.chat(), paraphrases=2, max_tokens=200)
    assert back.queries == ("女儿学钢琴的情况",)


def test_expansions_fall_back_offline() -> None:
    understood = heuristic_understanding("When did Melanie go camping, and what did Caroline paint?", NOW)
    multi = expand("multi_query", understood, None, paraphrases=2, max_tokens=200)
    assert multi.queries == ("melanie go camping caroline paint", "melanie go camping", "caroline paint")
    hyde = expand("hyde", understood, None, paraphrases=2, max_tokens=200)
    assert hyde.queries and "?" not in hyde.queries[0]
    back = expand("step_back", understood, None, paraphrases=2, max_tokens=200)
    assert back.queries == ("Melanie Caroline",)
    assert all(step.step.calls == 0 for step in (multi, hyde, back))


def test_expansion_failure_is_recorded(server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {})  # every call fails with HTTP 500
    understood = heuristic_understanding("What did Caroline paint?", NOW)
    hyde = expand("hyde", understood, oracle.chat(), paraphrases=2, max_tokens=200)
    assert hyde.step.source == "heuristic" and hyde.step.fallback is not None
    assert hyde.queries == ("Caroline paint",)


def test_evaluator_verdict_from_the_model_and_its_checks(server: ScriptedServer) -> None:
    understood = heuristic_understanding("What did Caroline paint?", NOW)
    oracle = DeepOracle(server, {"evaluate": {"sufficient": False, "missing": "the painting",
                                             "next_query": "Caroline painting"}})  # fmt: skip
    verdict, step = evaluate(understood, [], oracle.chat(), round_number=1, max_tokens=200, best_by_query={},
                             searched=set())  # fmt: skip
    assert verdict.source == "model" and not verdict.sufficient and verdict.next_query == "Caroline painting"
    assert step.step == "evaluate" and step.round == 1
    oracle.answers["evaluate"] = {"sufficient": False, "missing": "x", "next_query": ""}  # no next query: refused
    verdict, step = evaluate(understood, [], oracle.chat(), round_number=2, max_tokens=200, best_by_query={},
                             searched=set())  # fmt: skip
    assert verdict.source == "heuristic" and step.fallback is not None and "next query" in step.fallback
    assert not verdict.sufficient and verdict.next_query == "caroline paint"  # nothing covers the question


def test_evaluator_echoing_its_instructions_is_refused(server: ScriptedServer) -> None:
    # What the bundled 1.5B model answered on LoCoMo: the field descriptions of the prompt, copied.
    echo = {"sufficient": False, "missing": "what is not found yet", "next_query": "a search query for what is missing"}
    oracle = DeepOracle(server, {"evaluate": echo})
    understood = heuristic_understanding("What did Caroline paint?", NOW)
    verdict, step = evaluate(understood, [], oracle.chat(), round_number=1, max_tokens=200, best_by_query={},
                             searched=set())  # fmt: skip
    assert verdict.source == "heuristic" and step.fallback is not None and "repeats the instructions" in step.fallback
