"""Resolve which model runs the write path, and say why (``memstrata doctor`` prints the reason).

Order: explicit configuration > OpenAI-compatible settings in the environment > the bundled local
model if installed > the rules extractor (no model at all).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memstrata.config import LLMSettings
from memstrata.errors import InvalidInputError
from memstrata.providers.llm import ChatModel
from memstrata.providers.llm_presets import CHAT_PRESETS
from memstrata.providers.local_llm import default_cache_dir, local_model_available, shared_local_model


@dataclass(frozen=True)
class ResolvedLLM:
    model: ChatModel | None  # None: the rules extractor
    kind: str  # "openai-compatible" | "local" | "rules"
    reason: str


def _chat(settings: LLMSettings, base_url: str, model: str | None, api_key: str | None) -> ChatModel:
    if not model:
        raise InvalidInputError("llm.model is required for an OpenAI-compatible server (e.g. MEMSTRATA_LLM__MODEL)")
    from memstrata.providers.openai_chat import OpenAICompatibleChat  # httpx: ~8 MB, only where configured

    return OpenAICompatibleChat(
        base_url, model, api_key, timeout_s=settings.timeout_s, max_attempts=settings.max_attempts
    )


def _local(settings: LLMSettings, environ: Mapping[str, str]) -> ChatModel:
    # llm.model_dir, else MEMSTRATA_MODEL_DIR, else the user data dir: the documented alias was never read (a user
    # trial found the 1.1 GB model assembled under $HOME while it pointed elsewhere)
    return shared_local_model(
        Path(settings.model_path).expanduser() if settings.model_path else None,
        cache_dir=Path(settings.model_dir).expanduser() if settings.model_dir else default_cache_dir(environ),
        n_ctx=settings.n_ctx,
        threads=settings.threads,
        max_attempts=settings.max_attempts,
    )


def resolve_llm(settings: LLMSettings, environ: Mapping[str, str]) -> ResolvedLLM:
    provider = settings.provider
    if provider == "rules":
        return ResolvedLLM(None, "rules", "llm.provider = rules (configured)")
    if provider == "local":
        return ResolvedLLM(_local(settings, environ), "local", "llm.provider = local (configured)")
    if provider in CHAT_PRESETS:
        from memstrata.providers.openai_chat import OpenAICompatibleChat

        chat: ChatModel = OpenAICompatibleChat.from_preset(
            provider,
            model=settings.model,
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout_s=settings.timeout_s,
            max_attempts=settings.max_attempts,
        )
        where = f" at {settings.base_url}" if settings.base_url else ""
        return ResolvedLLM(chat, "openai-compatible", f"llm.provider = {provider} preset{where} (configured)")
    if provider not in ("auto", "openai"):
        known = ", ".join(["auto", "rules", "local", *sorted(CHAT_PRESETS)])
        raise InvalidInputError(f"unknown llm.provider {provider!r}; use one of {known}")
    if settings.base_url:
        chat = _chat(settings, settings.base_url, settings.model, settings.api_key)
        return ResolvedLLM(chat, "openai-compatible", f"llm.base_url = {settings.base_url} (configured)")
    if environ.get("OPENAI_API_KEY") or environ.get("OPENAI_BASE_URL"):
        base_url = environ.get("OPENAI_BASE_URL", CHAT_PRESETS["openai"].base_url)
        model = settings.model or environ.get("OPENAI_MODEL") or CHAT_PRESETS["openai"].default_model
        chat = _chat(settings, base_url, model, settings.api_key or environ.get("OPENAI_API_KEY"))
        return ResolvedLLM(chat, "openai-compatible", f"OPENAI_* environment variables ({base_url}, {model})")
    if local_model_available():
        return ResolvedLLM(_local(settings, environ), "local", "bundled local model installed (memstrata[local])")
    return ResolvedLLM(None, "rules", "no model configured or installed: bilingual rules extractor")
