"""Structured chat completions from any OpenAI-compatible ``/chat/completions`` endpoint.

OpenAI, DeepSeek, DashScope (Qwen), Ollama and vLLM differ only in configuration (see ``llm_presets``) and in
how much of ``response_format`` they accept; the latter is discovered at run time and remembered.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from typing import Any, Literal

import httpx

from memstrata.errors import InvalidInputError, ProviderError
from memstrata.providers.llm import ChatMessage, M, StructuredResult, Usage, run_with_repair
from memstrata.providers.llm_presets import CHAT_PRESETS

JsonMode = Literal["json_schema", "json_object", "none"]

_FALLBACK: dict[JsonMode, JsonMode] = {"json_schema": "json_object", "json_object": "none"}
# Worth retrying: the server is busy or restarting, not rejecting the request.
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class OpenAICompatibleChat:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_attempts: int = 3,
        json_mode: JsonMode = "json_schema",
        client: httpx.Client | None = None,
        *,
        transport_retries: int = 2,
        retry_backoff_s: float = 0.5,
        api_key_env: str | None = None,
    ) -> None:
        self._model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._api_key_env = api_key_env  # only named in error messages
        self._max_attempts = max_attempts
        self._transport_retries = transport_retries
        self._retry_backoff_s = retry_backoff_s
        self.json_mode: JsonMode = json_mode  # public so callers can see what the server ended up accepting
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=timeout_s)
        self._timeout_s = timeout_s

    @classmethod
    def from_preset(
        cls, name: str, model: str | None = None, api_key: str | None = None, base_url: str | None = None,
        **kwargs: Any,
    ) -> OpenAICompatibleChat:
        """Build from a ``CHAT_PRESETS`` row; the key comes from the preset's env var when not given, and a
        ``base_url`` given here (a proxy, a self-hosted server of that vendor's API) replaces the preset's."""
        preset = CHAT_PRESETS.get(name)
        if preset is None:
            raise InvalidInputError(f"unknown chat preset {name!r}; known presets: {', '.join(sorted(CHAT_PRESETS))}")
        chosen = model or preset.default_model
        if not chosen:
            raise InvalidInputError(
                f"preset {name!r} has no default model; pass model=... (the name the server serves)"
            )
        if api_key is None and preset.api_key_env:
            api_key = os.environ.get(preset.api_key_env)  # read at call time, never at import
            if not api_key:
                raise ProviderError(f"preset {name!r} needs an API key: set {preset.api_key_env} or pass api_key=...")
        kwargs.setdefault("json_mode", "json_schema" if preset.supports_json_schema else "json_object")
        return cls(base_url or preset.base_url, chosen, api_key, api_key_env=preset.api_key_env, **kwargs)

    @property
    def model_id(self) -> str:
        return self._model

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    def complete_structured(
        self,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> StructuredResult[M]:
        def call_once(conversation: Sequence[ChatMessage], schema: dict[str, Any]) -> tuple[str, Usage]:
            return self._complete(conversation, schema, response_model.__name__, max_tokens, temperature)

        return run_with_repair(
            call_once, messages, response_model, max_attempts=self._max_attempts, model_id=self.model_id
        )

    def _complete(
        self, messages: Sequence[ChatMessage], schema: dict[str, Any], name: str, max_tokens: int, temperature: float
    ) -> tuple[str, Usage]:
        while True:
            body: dict[str, Any] = {
                "model": self._model,
                "messages": [
                    {"role": m.role, "content": m.content} for m in _with_schema_hint(messages, schema, self.json_mode)
                ],
                "max_tokens": max_tokens,
                "temperature": temperature,
            }
            response_format = _response_format(self.json_mode, name, schema)
            if response_format is not None:
                body["response_format"] = response_format
            response = self._post(body)
            if response.status_code == 400 and self.json_mode != "none" and _rejects_response_format(response):
                # Many compatible servers accept only part of response_format; step down once per level, remember.
                self.json_mode = _FALLBACK[self.json_mode]
                continue
            return _parse_completion(self._check(response), self._url)

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        last: str = ""
        for attempt in range(self._transport_retries + 1):
            if attempt:
                time.sleep(self._retry_backoff_s * 2 ** (attempt - 1))
            try:
                response = self._client.post(self._url, json=body, headers=headers, timeout=self._timeout_s)
            except httpx.TimeoutException:
                last = f"no answer within {self._timeout_s:g} s"
                continue
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in _RETRY_STATUS:
                last = f"HTTP {response.status_code}: {_excerpt(response)}"
                continue
            return response
        raise ProviderError(
            f"chat request to {self._url} failed after {self._transport_retries + 1} tries ({last}); "
            "check that the server is running and base_url is right, or raise timeout_s for slow models"
        )

    def _check(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code in (401, 403):
            key_hint = f" (from {self._api_key_env})" if self._api_key_env else ""
            raise ProviderError(
                f"{self._url} refused the request with HTTP {response.status_code}; "
                f"check the API key{key_hint} and that it may use model {self._model!r}"
            )
        if response.status_code >= 400:
            raise ProviderError(
                f"{self._url} answered HTTP {response.status_code}: {_excerpt(response)}; check model name and request"
            )
        try:
            payload = response.json()
        except ValueError as exc:
            raise ProviderError(f"{self._url} did not answer with JSON: {_excerpt(response)}") from exc
        if not isinstance(payload, dict):
            raise ProviderError(f"{self._url} did not return an OpenAI-style chat completion")
        return payload


def _response_format(mode: JsonMode, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if mode == "json_schema":
        # strict=False: OpenAI's strict mode rejects ordinary pydantic schemas (optional fields, defaults).
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _with_schema_hint(messages: Sequence[ChatMessage], schema: dict[str, Any], mode: JsonMode) -> Sequence[ChatMessage]:
    """Without server-side schema decoding the model only knows the shape if the prompt says it.

    json_object mode also requires the word "JSON" in the prompt on several vendors, which this supplies.
    """
    if mode == "json_schema":
        return messages
    hint = "Answer with one JSON object matching this JSON Schema:\n" + json.dumps(
        schema, ensure_ascii=False, separators=(",", ":")
    )
    if messages and messages[0].role == "system":
        return [ChatMessage("system", f"{messages[0].content}\n\n{hint}"), *messages[1:]]
    return [ChatMessage("system", hint), *messages]


def _rejects_response_format(response: httpx.Response) -> bool:
    text = response.text.lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "response format"))


def _parse_completion(payload: dict[str, Any], url: str) -> tuple[str, Usage]:
    try:
        message = payload["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderError(f"{url} returned no choices[0].message; is it an OpenAI-compatible chat server?") from exc
    # A refusal or empty content is the model's output, not a transport fault: let the repair loop see it.
    raw = message.get("content") or message.get("refusal") or ""
    usage = payload.get("usage") or {}
    return str(raw), Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


def _excerpt(response: httpx.Response, limit: int = 300) -> str:
    return response.text[:limit].replace("\n", " ")
