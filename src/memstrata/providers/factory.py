"""Build providers from settings. The only place that maps configuration rows to classes."""

from __future__ import annotations

from memstrata.config import EmbedderSettings
from memstrata.errors import InvalidInputError
from memstrata.providers.openai_compat import OpenAICompatibleEmbedder
from memstrata.providers.protocol import Embedder
from memstrata.providers.use_embedder import UniversalSentenceEncoder


def build_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.provider == "use":
        return UniversalSentenceEncoder(threads=settings.threads)
    if not (settings.base_url and settings.model and settings.dims):
        raise InvalidInputError(
            "embedder.provider=openai needs embedder.base_url, embedder.model and embedder.dims "
            "(e.g. MEMSTRATA_EMBEDDER__BASE_URL=http://localhost:11434/v1 MEMSTRATA_EMBEDDER__MODEL=bge-m3 "
            "MEMSTRATA_EMBEDDER__DIMS=1024)"
        )
    return OpenAICompatibleEmbedder(
        base_url=settings.base_url, model=settings.model, dims=settings.dims, api_key=settings.api_key
    )
