"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint.

OpenAI, Ollama, vLLM, TEI (e.g. BGE-M3) and DashScope all speak this protocol, so they are
configuration (base_url, model, key), not classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from memstrata.errors import ProviderError
from memstrata.providers.protocol import Vectors, normalise_rows


class OpenAICompatibleEmbedder:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dims: int,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        batch_size: int = 64,
        client: httpx.Client | None = None,
    ) -> None:
        self.model_id = model
        self.dims = dims
        self._url = base_url.rstrip("/") + "/embeddings"
        self._batch_size = batch_size
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(timeout=timeout_s, headers=headers)

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            rows.extend(self._request(list(texts[start : start + self._batch_size])))
        return normalise_rows(rows, expected_rows=len(texts), dims=self.dims, source=self._url)

    def _request(self, batch: list[str]) -> list[list[float]]:
        try:
            response = self._client.post(self._url, json={"model": self.model_id, "input": batch})
            response.raise_for_status()
            data = response.json()["data"]
        except httpx.HTTPError as exc:
            raise ProviderError(f"embedding request to {self._url} failed: {exc}; check base_url and key") from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(f"{self._url} did not return an OpenAI-style embeddings response") from exc
        ordered = sorted(data, key=lambda item: item.get("index", 0))
        return [item["embedding"] for item in ordered]
