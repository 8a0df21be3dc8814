"""Rerankers: reorder a few candidate texts for a query, scoring each in [0, 1].

A reranker implements one method, ``rerank(query, documents) -> Reranked``. Two ship:

- :class:`LLMReranker` asks the configured chat model, in prompts a 1.5B model handles: *listwise* (one
  call: "which of these numbered memories help answer the question, best first?") or *pointwise* (one
  yes/no call per candidate). Numbers the model invents are ignored; candidates it leaves out keep their
  order after the ones it chose.
- :class:`~memstrata.providers.rerank_http.HTTPReranker` calls an OpenAI-compatible ``/rerank`` endpoint.

No cross-encoder with weights inside a PyPI package exists (DESIGN.md §4), so reranking is off by default
(``[rerank] provider = "off"``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from memstrata.lexical import has_han
from memstrata.providers.llm import ChatMessage, ChatModel, Usage

SHOWN_CHARS = 240  # each candidate is cut to this many characters in a prompt


@dataclass(frozen=True)
class Reranked:
    scores: tuple[float, ...]  # one per document, in the order given, each in [0, 1]
    usage: Usage = field(default_factory=Usage)
    calls: int = 1
    seconds: float = 0.0


class Reranker(Protocol):
    @property
    def model_id(self) -> str: ...

    def rerank(self, query: str, documents: Sequence[str]) -> Reranked:
        """Scores for ``documents``; raises ProviderError when the reranker fails."""
        ...


class ListwiseReply(BaseModel):
    ranking: list[int] = Field(default_factory=list, max_length=100)


class PointwiseReply(BaseModel):
    relevant: bool


def _shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


_LISTWISE = {
    "en": "Question: {query}\nMemories:\n{documents}\nranking: the numbers of the memories that help answer the "
    "question, most helpful first; leave out the others",
    "zh": "问题：{query}\n记忆：\n{documents}\nranking：有助于回答问题的记忆编号，最有用的在前；无关的不要列出",
}
_POINTWISE = {
    "en": "Question: {query}\nMemory: {document}\nrelevant: does this memory help answer the question?",
    "zh": "问题：{query}\n记忆：{document}\nrelevant：这条记忆有助于回答这个问题吗？",
}
_SYSTEM = {
    "en": "You judge which memories help answer a question. Answer in JSON.",
    "zh": "你判断哪些记忆有助于回答问题。用 JSON 回答。",
}


def listwise_scores(ranking: Sequence[int], count: int) -> tuple[float, ...]:
    """Chosen candidates (1-based numbers, first is best) score from 1 down to 0.5; the rest 0. Numbers out of
    range and repeats are ignored."""
    chosen = [n - 1 for n in dict.fromkeys(ranking) if 1 <= n <= count]
    scores = [0.0] * count
    for place, index in enumerate(chosen):
        scores[index] = 1.0 - 0.5 * place / max(1, len(chosen))
    return tuple(scores)


class LLMReranker:
    def __init__(self, model: ChatModel, style: Literal["listwise", "pointwise"] = "listwise",
                 max_tokens: int = 64) -> None:  # fmt: skip
        self._model = model
        self._style = style
        self._max_tokens = max_tokens

    @property
    def model_id(self) -> str:
        return f"llm-{self._style}:{self._model.model_id}"

    def rerank(self, query: str, documents: Sequence[str]) -> Reranked:
        language = "zh" if has_han(query) else "en"
        system = ChatMessage("system", _SYSTEM[language])
        started = time.perf_counter()
        if self._style == "listwise":
            listed = "\n".join(f"{n}. {_shown(doc)}" for n, doc in enumerate(documents, start=1))
            prompt = _LISTWISE[language].format(query=query, documents=listed)
            result = self._model.complete_structured([system, ChatMessage("user", prompt)], ListwiseReply,
                                                     max_tokens=self._max_tokens)  # fmt: skip
            scores = listwise_scores(result.data.ranking, len(documents))
            return Reranked(scores, result.usage, 1, time.perf_counter() - started)
        usage, scores_list = Usage(), []
        for document in documents:
            prompt = _POINTWISE[language].format(query=query, document=_shown(document))
            answer = self._model.complete_structured([system, ChatMessage("user", prompt)], PointwiseReply,
                                                     max_tokens=16)  # fmt: skip
            usage += answer.usage
            scores_list.append(1.0 if answer.data.relevant else 0.0)
        return Reranked(tuple(scores_list), usage, len(documents), time.perf_counter() - started)
