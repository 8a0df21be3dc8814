"""A reranker behind an OpenAI-compatible ``POST {base_url}/rerank`` endpoint (vLLM, Jina, Cohere style).

Request: ``{"model", "query", "documents": [...], "top_n"}``. Answer: ``{"results": [{"index",
"relevance_score"}, ...]}`` (Cohere and vLLM) or ``"score"`` in place of ``relevance_score`` (some
servers). Scores outside [0, 1] (raw logits) are squashed with the logistic function; documents the server
leaves out score 0. Each call opens its own short-lived connection: a rerank happens once per deep search.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import httpx

from memstrata.errors import ProviderError
from memstrata.providers.rerank import Reranked


class HTTPReranker:
    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:  # fmt: skip
        self._url = base_url.rstrip("/") + "/rerank"
        self._model = model
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._transport = transport

    @property
    def model_id(self) -> str:
        return f"http:{self._model}"

    def rerank(self, query: str, documents: Sequence[str]) -> Reranked:
        body = {"model": self._model, "query": query, "documents": list(documents), "top_n": len(documents)}
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        started = time.perf_counter()
        try:
            with httpx.Client(timeout=self._timeout_s, transport=self._transport) as client:
                response = client.post(self._url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise ProviderError(f"the reranker at {self._url} gave no answer within {self._timeout_s:g} s; "
                                "raise rerank.timeout_s or check the server") from None  # fmt: skip
        except httpx.TransportError as exc:
            raise ProviderError(f"cannot reach the reranker at {self._url} ({exc}); check rerank.base_url") from None
        if response.status_code >= 400:
            raise ProviderError(
                f"the reranker at {self._url} answered HTTP {response.status_code}: {response.text[:300]}; "
                "check rerank.model and rerank.api_key"
            )
        scores = parse_rerank(response, len(documents), self._url)
        return Reranked(scores, calls=1, seconds=time.perf_counter() - started)


def _squash(score: float) -> float:
    return score if 0.0 <= score <= 1.0 else 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, score))))


def parse_rerank(response: httpx.Response, count: int, url: str) -> tuple[float, ...]:
    try:
        payload: Any = response.json()
        results = payload["results"]
        scores = [0.0] * count
        for row in results:
            index = int(row["index"])
            raw = row.get("relevance_score", row.get("score"))
            if not 0 <= index < count or raw is None:
                raise ValueError(f"result {row!r} names no document of the {count} sent")
            scores[index] = _squash(float(raw))
    except (ValueError, KeyError, TypeError) as exc:
        raise ProviderError(f"the reranker at {url} did not answer with results[].index/relevance_score: "
                            f"{exc}; is it a /rerank endpoint?") from None  # fmt: skip
    return tuple(scores)
