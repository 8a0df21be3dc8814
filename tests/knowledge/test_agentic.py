"""The agentic chunker against a scripted OpenAI-compatible server (fixed replies over real HTTP; no
model behind it): the boundary the model names is used, an unusable answer keeps the passages together
with a note (no text lost), and an unreachable model fails loudly."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memstrata.errors import ProviderError
from memstrata.knowledge.chunking import ChunkSize, make_chunker
from memstrata.providers.openai_chat import OpenAICompatibleChat
from support.scripted_llm import Reply, ScriptedServer, completion

COOKING = "".join(
    ["把番茄切块，鸡蛋打散备用。", "锅里放油，先炒鸡蛋再盛出。", "番茄炒出汁后加入鸡蛋。", "最后加一点盐和糖调味。"]
)
FOOTBALL = " ".join(
    ["The striker scored twice in the first half.", "The goalkeeper saved a penalty.", "The home team won."]
)
TEXT = COOKING + "\n" + FOOTBALL


def _chat(server: ScriptedServer) -> OpenAICompatibleChat:
    return OpenAICompatibleChat(server.base_url, "scripted", timeout_s=2.0, max_attempts=2, transport_retries=0)


def _passages(request: dict[str, Any]) -> dict[int, str]:
    prompt = request["messages"][-1]["content"]
    return {int(n): text for n, text in re.findall(r"^ID (\d+): (.*)$", prompt, flags=re.MULTILINE)}


def _topic_change(request: dict[str, Any]) -> Reply:
    """Answers like a model that notices the switch from cooking to football."""
    passages = _passages(request)
    first = min(passages)
    change = next((n for n, text in sorted(passages.items()) if n > first and text.startswith("The striker")), None)
    return completion({"split_index": change if change is not None else max(passages) + 1})


def test_the_model_chooses_the_boundary(server: ScriptedServer) -> None:
    server.enqueue(*[Reply(respond=_topic_change) for _ in range(20)])
    chunker = make_chunker("agentic", ChunkSize(size=200, overlap=0), model=_chat(server))
    result = chunker.split(TEXT)
    texts = [TEXT[p.start : p.end] for p in result.pieces]
    assert texts == [COOKING, FOOTBALL]
    assert result.model_calls == len(server.requests) >= 1
    assert result.notes == ()
    assert "ID 0:" in server.user_prompts()[0]  # passages are numbered, the model only picks a number


def test_an_unusable_answer_keeps_passages_together_and_says_so(server: ScriptedServer) -> None:
    server.enqueue(*[completion("I think the topic changes somewhere in the middle.") for _ in range(20)])
    result = make_chunker("agentic", ChunkSize(size=200, overlap=0), model=_chat(server)).split(TEXT)
    covered = "".join(TEXT[p.start : p.end] for p in result.pieces)
    assert covered.replace("\n", "") == TEXT.replace("\n", "")  # nothing dropped
    assert result.notes and "unusable" in result.notes[0] and "no text was lost" in result.notes[0]


def test_an_unreachable_model_fails_the_document() -> None:
    dead = OpenAICompatibleChat("http://127.0.0.1:9/v1", "nothing", timeout_s=0.5, max_attempts=1, transport_retries=0)
    chunker = make_chunker("agentic", ChunkSize(size=200, overlap=0), model=dead)
    with pytest.raises(ProviderError, match="agentic chunking needs the model"):
        chunker.split(TEXT)
