"""A scripted model for deep-search tests: the scripted OpenAI-compatible server (tests/support) answering
each deep step by what its prompt asks. A stand-in at the HTTP boundary only: the real client, the real
JSON parsing and repair, and the real deep-search code run behind it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memstrata.providers.openai_chat import OpenAICompatibleChat
from support.scripted_llm import Reply, ScriptedServer, completion

Answer = dict[str, Any] | str | Callable[[str], dict[str, Any] | str]

# Words each step's prompt contains (system prompt + user prompt), in both languages.
_STEPS = {
    "understand": ("into a search request", "整理成检索请求"),
    "multi_query": ("in other words", "种不同的说法"),
    "hyde": ("as it might be stored in memory", "可能存在记忆里"),
    "step_back": ("Step back", "退一步"),
    "evaluate": ("check whether retrieved memories", "检查检索到的记忆"),
    "rerank": ("judge which memories", "判断哪些记忆"),
}


def step_of(request: dict[str, Any]) -> str:
    prompt = "\n".join(message["content"] for message in request["messages"])
    for step, markers in _STEPS.items():
        if any(marker in prompt for marker in markers):
            return step
    raise AssertionError(f"not a deep-search prompt: {prompt[:200]}")


class DeepOracle:
    """Answers by step: ``answers[step]`` is a JSON object, raw text (garbage), or a function of the user
    prompt. A step without an answer gets HTTP 500 (the model failing)."""

    def __init__(self, server: ScriptedServer, answers: dict[str, Answer]) -> None:
        self.server = server
        self.answers = answers
        self.asked: list[str] = []
        server.answer_with(self._respond)

    def _respond(self, request: dict[str, Any]) -> Reply:
        step = step_of(request)
        self.asked.append(step)
        answer = self.answers.get(step)
        if answer is None:
            return Reply(500, "no answer scripted for " + step)
        if callable(answer):
            answer = answer(request["messages"][-1]["content"])
        return completion(answer, prompt_tokens=20, completion_tokens=5)

    def chat(self) -> OpenAICompatibleChat:
        return OpenAICompatibleChat(self.server.base_url, "scripted", timeout_s=10, max_attempts=2,
                                    transport_retries=0, retry_backoff_s=0.01)  # fmt: skip

    def count(self, step: str) -> int:
        return self.asked.count(step)
