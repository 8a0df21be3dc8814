"""Build the configured reranker (``[rerank]``), or None when reranking is off."""

from __future__ import annotations

from collections.abc import Mapping

from memstrata.config import RerankSettings
from memstrata.errors import InvalidInputError
from memstrata.providers.llm import ChatModel
from memstrata.providers.rerank import LLMReranker, Reranker


def build_reranker(
    settings: RerankSettings, chat_model: ChatModel | None, environ: Mapping[str, str]
) -> Reranker | None:
    """The configured reranker, or None when reranking is off. ``environ`` (e.g. ``os.environ``) supplies
    ``rerank.api_key_env``; it is a parameter so nothing reads the environment behind the caller's back."""
    if settings.provider == "off":
        return None
    if settings.provider == "llm":
        if chat_model is None:
            raise InvalidInputError(
                "rerank.provider = 'llm' needs a chat model: configure [llm] (or install memstrata[local]), "
                "or set rerank.provider = 'off'"
            )
        return LLMReranker(chat_model, settings.style)
    assert settings.base_url is not None and settings.model is not None  # RerankSettings checks this
    key = settings.api_key
    if key is None and settings.api_key_env:
        key = environ.get(settings.api_key_env)
    from memstrata.providers.rerank_http import HTTPReranker  # httpx: ~8 MB, only where configured

    return HTTPReranker(settings.base_url, settings.model, api_key=key, timeout_s=settings.timeout_s)
