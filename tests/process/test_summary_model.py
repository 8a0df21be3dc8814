"""Model-written summaries, with a scripted model at the HTTP boundary (fixed replies over real HTTP through
the real client; no model behind it). The engine checks each answer: a summary in another language than
the task, or no usable answer at all, leaves the extractive summary in place and says why."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.openai_chat import OpenAICompatibleChat
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.records.process import SUMMARY_KIND
from memstrata.storage.protocol import Store
from memstrata.write.extract import LLMExtractor
from support.scripted_llm import ScriptedServer, completion


@pytest.fixture
def modelled(store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer) -> Iterator[Memory]:
    chat = OpenAICompatibleChat(server.base_url, "scripted", timeout_s=2.0, max_attempts=2, transport_retries=0)
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    yield Memory(store, embedder, settings=settings, extractor=LLMExtractor(chat))


def _task(memory: Memory, goal: str, steps: list[tuple[str, str, bool]]) -> str:
    with memory.tasks.start(goal, task_type="debugging", user_id="u1") as task:
        for action, text, works in steps:
            task.record(action, input=text, dead_end=not works, status="succeeded" if works else "failed")
        task.finish(steps[-1][1])
    return task.id


def test_a_good_model_summary_stands_in_for_the_chain(modelled: Memory, server: ScriptedServer) -> None:
    summary = "Login failed after the deploy; clearing caches did nothing; rotating the JWT key fixed it."
    server.enqueue(completion({"summary": summary}))
    task_id = _task(modelled, "Login fails after deploy",
                    [("run", "clear the cache", False), ("run", "rotate the JWT key", True)])  # fmt: skip
    task = modelled.tasks.get(task_id, user_id="u1")
    assert task.summary == summary and task.summary_source == "model:scripted"
    prompt = server.user_prompts()[0]
    assert "✓ run: rotate the JWT key" in prompt and "✗ run: clear the cache" in prompt  # the record, verbatim
    [unit] = modelled.get_all(user_id="u1", filters={"kind": [SUMMARY_KIND]})
    assert unit.text == f"Login fails after deploy\n{summary}"


def test_a_summary_in_the_wrong_language_is_refused(modelled: Memory, server: ScriptedServer) -> None:
    server.enqueue(completion({"summary": "The login bug was fixed by rotating the key."}))
    task_id = _task(modelled, "发布后登录失败", [("run", "清空缓存", False), ("run", "轮换 JWT 密钥", True)])
    task = modelled.tasks.get(task_id, user_id="u1")
    assert task.summary_source == "extractive (model scripted summary refused: not in the task's language (Chinese))"
    assert task.summary is not None and "✓ run: 轮换 JWT 密钥" in task.summary  # Chinese stays Chinese


def test_a_model_that_never_answers_well_leaves_the_extractive_summary(
    modelled: Memory, server: ScriptedServer
) -> None:
    server.enqueue(completion("not json"), completion("still not json"))
    task_id = _task(modelled, "Nightly export is slow", [("query", "EXPLAIN the export query", True)])
    task = modelled.tasks.get(task_id, user_id="u1")
    assert task.summary_source is not None and task.summary_source.startswith("extractive (model scripted failed")
    assert task.summary == "Nightly export is slow\n→ EXPLAIN the export query\n✓ query: EXPLAIN the export query"


def test_summaries_stay_extractive_when_the_model_is_not_wanted(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer
) -> None:
    chat = OpenAICompatibleChat(server.base_url, "scripted", timeout_s=2.0, max_attempts=1, transport_retries=0)
    settings = load_settings({"store": {"path": store.location}, "process": {"summary_model": False}})
    memory = Memory(store, embedder, settings=settings, extractor=LLMExtractor(chat))
    task_id = _task(memory, "Rename a column", [("run", "ALTER TABLE rename", True)])
    assert memory.tasks.get(task_id, user_id="u1").summary_source == "extractive" and server.requests == []
