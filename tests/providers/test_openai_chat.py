"""OpenAICompatibleChat against a real HTTP server on 127.0.0.1.

The server is a scripted stand-in at the HTTP boundary: it answers queued, fixed responses (no model behind it) and
records every request, so the client's real httpx traffic, retries and fallbacks are exercised without a vendor.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from memstrata.errors import InvalidInputError, ProviderError
from memstrata.providers.llm import ChatMessage, ChatModel, ModelOutputError, Usage
from memstrata.providers.llm_presets import CHAT_PRESETS
from memstrata.providers.openai_chat import OpenAICompatibleChat
from support.scripted_llm import Reply, ScriptedServer, completion


class Fact(BaseModel):
    text: str


class Facts(BaseModel):
    facts: list[Fact]


PROMPT = [ChatMessage("system", "Extract facts as JSON."), ChatMessage("user", "我叫李明，住在杭州。")]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer().running() as running:
        yield running


@pytest.fixture
def chat(server: ScriptedServer) -> Iterator[OpenAICompatibleChat]:
    client = OpenAICompatibleChat(server.base_url, "test-model", api_key="sk-test", timeout_s=5, retry_backoff_s=0.01)
    yield client
    client.close()


def test_valid_json_is_parsed_and_request_is_openai_shaped(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(completion('{"facts": [{"text": "住在杭州"}]}'))
    result = chat.complete_structured(PROMPT, Facts, max_tokens=100, temperature=0.2)
    assert result.data == Facts(facts=[Fact(text="住在杭州")])
    assert (result.attempts, result.usage, result.model_id) == (1, Usage(7, 3), "test-model")
    sent = server.requests[0]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["model"] == "test-model"
    assert (sent["max_tokens"], sent["temperature"]) == (100, 0.2)
    assert sent["messages"][1] == {"role": "user", "content": "我叫李明，住在杭州。"}
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "Facts"
    assert sent["response_format"]["json_schema"]["strict"] is False
    assert sent["response_format"]["json_schema"]["schema"] == Facts.model_json_schema()
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_json_in_code_fences_is_accepted(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(completion('Here you go:\n```json\n{"facts": [{"text": "叫李明"}]}\n```'))
    assert chat.complete_structured(PROMPT, Facts).data.facts[0].text == "叫李明"


def test_malformed_then_repaired(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(completion('{"facts": [{"text": "叫李明"'), completion('{"facts": [{"text": "叫李明"}]}', 9, 4))
    result = chat.complete_structured(PROMPT, Facts)
    assert result.attempts == 2
    assert result.usage == Usage(16, 7)  # summed over both attempts
    repair = server.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"facts": [{"text": "叫李明"'}
    assert repair[-1]["role"] == "user"
    assert "not valid" in repair[-1]["content"]
    assert "JSON Schema" in repair[-1]["content"]


def test_always_malformed_raises_with_raw_outputs(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(completion("I cannot do that."), completion("{oops}"), completion('{"facts": 1}'))
    with pytest.raises(ModelOutputError) as caught:
        chat.complete_structured(PROMPT, Facts)
    assert caught.value.raw_outputs == ["I cannot do that.", "{oops}", '{"facts": 1}']
    assert "facts" in caught.value.last_error
    assert len(server.requests) == 3


def test_missing_usage_counts_as_zero(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(completion('{"facts": []}', prompt_tokens=None))
    assert chat.complete_structured(PROMPT, Facts).usage == Usage(0, 0)


def test_timeout_is_retried_then_reported(server: ScriptedServer) -> None:
    chat = OpenAICompatibleChat(server.base_url, "m", timeout_s=0.2, transport_retries=1, retry_backoff_s=0.01)
    server.enqueue(Reply(delay_s=5), Reply(delay_s=5))
    started = time.perf_counter()
    with pytest.raises(ProviderError, match=r"no answer within 0\.2 s") as caught:
        chat.complete_structured(PROMPT, Facts)
    assert time.perf_counter() - started < 3
    assert "check that the server is running" in str(caught.value)
    assert len(server.requests) == 2


def test_server_error_is_retried(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(Reply(503, {"error": "overloaded"}), completion('{"facts": []}'))
    assert chat.complete_structured(PROMPT, Facts).data == Facts(facts=[])
    assert len(server.requests) == 2


def test_unreachable_server_is_a_provider_error() -> None:
    chat = OpenAICompatibleChat("http://127.0.0.1:9/v1", "m", timeout_s=1, transport_retries=1, retry_backoff_s=0.01)
    with pytest.raises(ProviderError, match="base_url"):
        chat.complete_structured(PROMPT, Facts)


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failure_is_immediate(server: ScriptedServer, status: int) -> None:
    chat = OpenAICompatibleChat(server.base_url, "m", api_key="bad", api_key_env="OPENAI_API_KEY")
    server.enqueue(Reply(status, {"error": {"message": "invalid api key"}}))
    with pytest.raises(ProviderError, match=r"check the API key \(from OPENAI_API_KEY\)"):
        chat.complete_structured(PROMPT, Facts)
    assert len(server.requests) == 1  # no retry, no repair


def test_json_schema_rejected_falls_back_and_remembers(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    rejected = Reply(400, {"error": {"message": "response_format.type json_schema is not supported"}})
    server.enqueue(rejected, completion('{"facts": [{"text": "叫李明"}]}'), completion('{"facts": []}'))
    assert chat.complete_structured(PROMPT, Facts).data.facts[0].text == "叫李明"
    assert chat.json_mode == "json_object"
    first, second = server.requests[0], server.requests[1]
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object"}
    # Without server-side schemas the prompt carries the schema (and the word JSON that json_object demands).
    assert second["messages"][0]["role"] == "system"
    assert "JSON Schema" in second["messages"][0]["content"]
    assert second["messages"][0]["content"].startswith("Extract facts as JSON.")
    chat.complete_structured(PROMPT, Facts)
    assert server.requests[2]["response_format"] == {"type": "json_object"}  # remembered: no second 400


def test_fallback_reaches_no_response_format(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(
        Reply(400, {"error": "unknown field response_format"}),
        Reply(400, {"error": "unknown field response_format"}),
        completion('{"facts": []}'),
    )
    chat.complete_structured(PROMPT, Facts)
    assert chat.json_mode == "none"
    assert "response_format" not in server.requests[2]


def test_other_400_is_not_a_fallback(server: ScriptedServer, chat: OpenAICompatibleChat) -> None:
    server.enqueue(Reply(400, {"error": {"message": "model 'test-model' does not exist"}}))
    with pytest.raises(ProviderError, match=r"HTTP 400.*does not exist"):
        chat.complete_structured(PROMPT, Facts)
    assert chat.json_mode == "json_schema"


def test_presets_are_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert CHAT_PRESETS["qwen"] is CHAT_PRESETS["dashscope"]
    assert not CHAT_PRESETS["deepseek"].supports_json_schema
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-env")
    deepseek = OpenAICompatibleChat.from_preset("deepseek")
    as_protocol: ChatModel = deepseek  # mypy checks the class satisfies the protocol
    assert as_protocol.model_id == "deepseek-chat"
    assert (deepseek.model_id, deepseek.json_mode) == ("deepseek-chat", "json_object")
    deepseek.close()
    ollama = OpenAICompatibleChat.from_preset("ollama")
    assert (ollama.model_id, ollama.json_mode) == ("qwen2.5:7b", "json_schema")
    ollama.close()
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ProviderError, match="set OPENAI_API_KEY"):
        OpenAICompatibleChat.from_preset("openai")
    with pytest.raises(InvalidInputError, match="pass model="):
        OpenAICompatibleChat.from_preset("vllm")
    with pytest.raises(InvalidInputError, match="known presets"):
        OpenAICompatibleChat.from_preset("nope")
