"""The bundled local model, for real: schema-constrained JSON from Qwen2.5-Coder-1.5B via xllamacpp, offline."""

from __future__ import annotations

import importlib.util
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from memstrata.errors import ProviderError
from memstrata.providers.llm import ChatMessage, ChatModel, StructuredResult
from memstrata.providers.local_llm import (
    MODEL_FILENAME,
    MODEL_SIZE,
    LocalChatModel,
    StreamedAnswer,
    assemble_gguf,
    default_cache_dir,
    shared_local_model,
)

CJK = re.compile(r"[\u4e00-\u9fff]")

EXTRACT_PROMPT = (
    "你从用户的话里提取关于用户本人的事实，每条事实是一句简短的中文。只输出 JSON，格式："
    '{"facts": [{"text": "..."}]}。\n'
    '示例：输入"我是老师，喜欢爬山。" 输出 {"facts": [{"text": "用户是老师"}, {"text": "用户喜欢爬山"}]}'
)


class Fact(BaseModel):
    text: str


class Facts(BaseModel):
    facts: list[Fact]


class Answer(BaseModel):
    city: str


def _report(capsys: pytest.CaptureFixture[str], label: str, result: StructuredResult[Any]) -> None:
    with capsys.disabled():
        rate = result.usage.completion_tokens / result.latency_s
        print(
            f"\n[local llm] {label}: {result.latency_s:.1f} s, {result.usage.prompt_tokens} prompt + "
            f"{result.usage.completion_tokens} completion tokens ({rate:.1f} completion tok/s overall), "
            f"attempts={result.attempts}: {result.raw}"
        )


@pytest.mark.slow
def test_extracts_chinese_facts(
    local_model: LocalChatModel, local_model_timings: dict[str, float], capsys: pytest.CaptureFixture[str]
) -> None:
    with capsys.disabled():
        timings = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in local_model_timings.items())
        print(f"\n[local llm] {timings}")
    messages = [ChatMessage("system", EXTRACT_PROMPT), ChatMessage("user", "我叫李明，住在杭州，对花生过敏。")]
    result = local_model.complete_structured(messages, Facts, max_tokens=200)
    _report(capsys, "facts", result)
    assert isinstance(result.data, Facts)
    assert result.data.facts, "expected at least one fact"
    assert all(CJK.search(fact.text) for fact in result.data.facts)
    joined = "".join(fact.text for fact in result.data.facts)
    assert "杭州" in joined
    assert "花生" in joined
    assert result.model_id == "local:qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert result.usage.prompt_tokens > 0
    assert result.usage.completion_tokens > 0


@pytest.mark.slow
def test_concurrent_calls_are_safe(local_model: LocalChatModel) -> None:
    results: list[Answer] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            messages = [ChatMessage("user", '李明住在杭州。他住在哪个城市？用 JSON 回答：{"city": "..."}')]
            results.append(local_model.complete_structured(messages, Answer, max_tokens=24).data)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert len(results) == 2
    assert all("杭州" in answer.city for answer in results)


@pytest.mark.slow
def test_assembled_model_is_reused(local_model: LocalChatModel) -> None:
    path = local_model.model_path
    assert path.stat().st_size == MODEL_SIZE
    started = time.perf_counter()
    assert assemble_gguf(path.parent) == path
    assert time.perf_counter() - started < 0.5  # already there: no second 1 GB copy
    assert shared_local_model(path) is local_model


def test_default_cache_dir_honours_only_a_passed_environment(tmp_path: Path) -> None:
    assert default_cache_dir({"MEMSTRATA_MODEL_DIR": str(tmp_path)}) == tmp_path
    assert default_cache_dir({}).parts[-2:] == ("memstrata", "models")
    assert default_cache_dir() == default_cache_dir({})


def test_the_resolved_local_model_lives_where_memstrata_model_dir_says(tmp_path: Path) -> None:
    """A user trial set MEMSTRATA_MODEL_DIR as the README says and found the 1.1 GB model assembled under $HOME."""
    from memstrata.config import LLMSettings
    from memstrata.providers.llm_factory import resolve_llm

    resolved = resolve_llm(LLMSettings(provider="local"), {"MEMSTRATA_MODEL_DIR": str(tmp_path)})
    assert resolved.model is not None and resolved.model.model_path == tmp_path / MODEL_FILENAME  # nothing loaded
    chosen = resolve_llm(LLMSettings(provider="local", model_dir=str(tmp_path / "x")), {"MEMSTRATA_MODEL_DIR": "/y"})
    assert chosen.model is not None and chosen.model.model_path == tmp_path / "x" / MODEL_FILENAME  # the setting wins


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed: pip install -e '.[local]'")
    model: ChatModel = LocalChatModel(tmp_path / MODEL_FILENAME)  # mypy checks the class satisfies the protocol
    with pytest.raises(ProviderError, match="no model file"):
        model.complete_structured([ChatMessage("user", "hi")], Answer)


def _chunk(content: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}]}


def test_a_streamed_answer_stops_the_model_once_it_loops() -> None:
    """The callback llama.cpp calls per chunk returns True (stop) at the third copy of an item, not at max_tokens:
    the bundled model looped 100+ s per attempt on 2 cores. The chunks are llama.cpp's stream format."""
    answer = StreamedAnswer()
    item = '{"turn": 1, "text": "用户和 Mark 的关系是 colleague_of"}'
    stops = [answer.take(_chunk(text)) for text in ['{"facts": [', item, ", ", item, ", ", item]]
    assert stops == [False, False, False, False, False, True]
    assert answer.usage().completion_tokens == 6  # stopped early: its chunks are counted


def test_a_finished_stream_reports_llama_cpp_counts_and_errors() -> None:
    answer = StreamedAnswer()
    assert not answer.take(_chunk('{"facts": []}'))
    assert not answer.take({"choices": [{"delta": {}, "finish_reason": "stop"}],
                            "timings": {"prompt_n": 40, "cache_n": 100, "predicted_n": 7}})  # fmt: skip
    usage = answer.usage()
    assert (answer.items.text, usage.prompt_tokens, usage.completion_tokens) == ('{"facts": []}', 140, 7)
    failed = StreamedAnswer()
    assert failed.take({"error": {"message": "context full"}})
    assert failed.error == {"message": "context full"}
