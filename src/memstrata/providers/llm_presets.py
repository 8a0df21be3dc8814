"""OpenAI-compatible chat vendors as configuration rows: adding a vendor is one line, not a class."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatPreset:
    name: str
    base_url: str
    api_key_env: str | None  # None: local servers that take no key
    default_model: str | None  # None: the server serves whatever it was started with, so the caller must say
    supports_json_schema: bool  # False: ask for {"type": "json_object"} and put the schema in the prompt


_QWEN = ChatPreset("qwen", "https://dashscope.aliyuncs.com/compatible-mode/v1", "DASHSCOPE_API_KEY", "qwen-plus", True)

CHAT_PRESETS: dict[str, ChatPreset] = {
    "openai": ChatPreset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini", True),
    "deepseek": ChatPreset("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat", False),
    "qwen": _QWEN,
    "dashscope": _QWEN,
    "ollama": ChatPreset("ollama", "http://localhost:11434/v1", None, "qwen2.5:7b", True),
    "vllm": ChatPreset("vllm", "http://localhost:8000/v1", None, None, True),
}
