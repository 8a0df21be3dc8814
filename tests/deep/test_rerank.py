"""Rerankers at their HTTP boundary (the scripted server answers /rerank and /chat/completions) and the rerank
step of deep search: only the top few move, a failing reranker keeps the fused order and says why."""

from __future__ import annotations

import pytest
from tests.deep.conftest import MakeDeep
from tests.deep.oracle import DeepOracle
from tests.deep.test_loop import FACTS, PLAIN, seed

from memstrata.config import RerankSettings
from memstrata.errors import InvalidInputError, ProviderError
from memstrata.providers.rerank import LLMReranker, listwise_scores
from memstrata.providers.rerank_factory import build_reranker
from memstrata.providers.rerank_http import HTTPReranker
from support.scripted_llm import Reply, ScriptedServer


def test_http_reranker_speaks_the_rerank_protocol(server: ScriptedServer) -> None:
    server.enqueue(Reply(200, {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "score": -2.0}]}))
    reranker = build_reranker(RerankSettings(provider="http", base_url=server.base_url, model="bge-reranker",
                                             api_key_env="RERANK_KEY"), None, {"RERANK_KEY": "sk-r"})  # fmt: skip
    assert isinstance(reranker, HTTPReranker)
    result = reranker.rerank("what did Caroline paint?", ["a", "b", "c"])
    assert result.scores[1] == 0.9 and 0 < result.scores[0] < 0.2 and result.scores[2] == 0.0  # logit squashed
    request = server.requests[0]
    assert request["path"] == "/v1/rerank" and request["documents"] == ["a", "b", "c"]
    assert request["model"] == "bge-reranker" and server.headers[0]["Authorization"] == "Bearer sk-r"


@pytest.mark.parametrize(
    "reply", [Reply(503, "overloaded"), Reply(200, {"data": []}), Reply(200, {"results": [{"index": 7, "score": 1}]})]
)
def test_http_reranker_errors_say_what_to_check(server: ScriptedServer, reply: Reply) -> None:
    server.enqueue(reply)
    with pytest.raises(ProviderError, match="reranker"):
        HTTPReranker(server.base_url, "m").rerank("q", ["a", "b"])


def test_llm_reranker_listwise_and_pointwise(server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"rerank": {"ranking": [3, 9, 1, 3]}})
    listwise = LLMReranker(oracle.chat()).rerank("what did Caroline paint?", ["x", "y", "z"])
    assert listwise.scores == (0.75, 0.0, 1.0) and listwise.calls == 1  # 9 invented, repeat ignored
    oracle.answers["rerank"] = lambda prompt: {"relevant": "sunset" in prompt}
    pointwise = LLMReranker(oracle.chat(), "pointwise").rerank("Caroline?", ["a sunset", "a cat"])
    assert pointwise.scores == (1.0, 0.0) and pointwise.calls == 2
    assert listwise_scores([], 2) == (0.0, 0.0)


def test_llm_reranker_needs_a_model() -> None:
    with pytest.raises(InvalidInputError, match="chat model"):
        build_reranker(RerankSettings(provider="llm"), None, {})
    assert build_reranker(RerankSettings(), None, {}) is None  # off by default


def test_deep_search_reranks_the_top_hits(make_deep: MakeDeep, server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"evaluate": {"sufficient": True}})
    memory = make_deep(oracle.chat(), **PLAIN, rerank={"provider": "llm", "top_n": 3, "weight": 1.0})
    seed(memory)

    def pick_last(prompt: str) -> dict[str, list[int]]:
        return {"ranking": [3]}

    oracle.answers["rerank"] = pick_last
    fast = memory.search("Caroline painted the sunset", user_id="u1", threshold=0.0)
    deep = memory.deep_search("Caroline painted the sunset", user_id="u1", threshold=0.0)
    assert deep.hits[0].id == fast[2].id  # the reranker's choice, with weight 1
    assert [hit.id for hit in deep.hits[3:]] == [hit.id for hit in fast[3 : len(deep.hits)]]  # the rest keep place
    step = next(step for step in deep.trace.steps if step.step == "rerank")
    assert step.source == "model" and step.output[0] == fast[2].id


def test_failing_reranker_keeps_the_fused_order(make_deep: MakeDeep, server: ScriptedServer) -> None:
    memory = make_deep(None, **PLAIN, rerank={"provider": "http", "base_url": server.base_url, "model": "m"})
    seed(memory)
    server.enqueue(Reply(500, "boom"))
    deep = memory.deep_search("What did Caroline paint?", user_id="u1", threshold=0.0)
    assert deep.hits[0].memory.text == FACTS[0]
    step = next(step for step in deep.trace.steps if step.step == "rerank")
    assert step.source == "heuristic" and step.fallback is not None and "500" in step.fallback
    assert memory.search("What did Caroline paint?", user_id="u1", threshold=0.0)  # fast: no reranker call
    assert len(server.requests) == 1
