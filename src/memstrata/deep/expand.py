"""Query expansion: more ways to ask the same question, each searched on its own and fused (RAG-Fusion).

- multi-query: paraphrases of the question (term mismatch: "番茄" vs "西红柿"); offline, keyword
  sub-queries (the content words of the question and of each sub-question).
- HyDE: a hypothetical memory that would answer the question, searched instead of the question (a
  statement sits nearer to stored statements than a question does); offline, the question turned into a
  statement by dropping its question words.
- step-back: the more general question behind it, to reach the context around a detail; offline, the
  entities the question is about.

Every prompt asks for the query's language, and answers in another language are refused (the stored
text is never translated, so a translated query would only find translated memories).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from memstrata.deep.asking import ask
from memstrata.deep.heuristics import Language, keyword_query
from memstrata.deep.trace import ExpansionStep, Origin, StepTrace, Understanding
from memstrata.deep.understand import same_language
from memstrata.lexical import has_han
from memstrata.patterns import lazy_pattern
from memstrata.providers.llm import ChatMessage, ChatModel


class ParaphraseReply(BaseModel):
    queries: list[str] = Field(min_length=1, max_length=6)


class HydeReply(BaseModel):
    memory: str = Field(min_length=1, max_length=500)


class StepBackReply(BaseModel):
    question: str = Field(min_length=1, max_length=400)


_SYSTEM = {
    "en": "You help search a person's memories. Answer in JSON, in English.",
    "zh": "你帮助检索一个人的记忆。用 JSON 回答，内容用中文。",
}
_PROMPTS: dict[ExpansionStep, dict[Language, str]] = {
    "multi_query": {
        "en": "Question: {question}\nWrite {n} short search queries that say it in other words (same meaning), "
        "to find the memories that answer it.",
        "zh": "问题：{question}\n换{n}种不同的说法写出简短的检索语句（意思不变），用来找到能回答它的记忆。",
    },
    "hyde": {
        "en": "Question: {question}\nWrite one short sentence, as it might be stored in memory, that answers it. "
        "Invent plausible details.",
        "zh": "问题：{question}\n写一句可能存在记忆里、能回答这个问题的简短陈述。可以编造合理的细节。",
    },
    "step_back": {
        "en": "Question: {question}\nStep back from the details: write the more general question behind it, short.",
        "zh": "问题：{question}\n退一步，不拘细节：写出它背后更宽泛的一般性问题，要简短。",
    },
}

_EN_ASKING = lazy_pattern(
    r"^\s*(?:(?:what|when|where|who|whom|whose|which|why|how)(?:\s+(?:kind|kinds|type|types|sort)\s+of)?\s+\w*\s*)?"
    r"(?:do|does|did|is|are|was|were|has|have|had|can|could|will|would|should)?\s+",
    re.IGNORECASE,
)
_ZH_ASKING = lazy_pattern(
    r"什么时候|为什么|为啥|怎么样|怎么|什么|哪里|哪儿|哪个|哪些|哪天|哪年|哪一天|哪|谁|多少|几|是否|有没有|吗|呢|来着|啥"
)


def statement_form(question: str) -> str:
    """The question without its question words and mark: the offline stand-in for a hypothetical answer."""
    text = question.strip().rstrip("?？").strip()
    text = _ZH_ASKING.sub("", text) if has_han(text) else _EN_ASKING.sub("", text, count=1)
    return text.strip(" ,，")


@dataclass(frozen=True)
class Expansion:
    """The queries one expansion step adds, with the origin fusion weighs them by."""

    origin: Origin
    queries: tuple[str, ...]
    step: StepTrace


def _messages(step: ExpansionStep, understanding: Understanding, n: int) -> list[ChatMessage]:
    language = understanding.language
    prompt = _PROMPTS[step][language].format(question=understanding.question, n=n)
    return [ChatMessage("system", _SYSTEM[language]), ChatMessage("user", prompt)]


def _in_language(language: Language) -> Callable[[str], str]:
    def checked(text: str) -> str:
        text = text.strip()
        if not text or not same_language(text, language):
            raise ValueError(f"{text!r} is not in the query's language ({language})")
        return text

    return checked


def _offline(step: ExpansionStep, understanding: Understanding) -> list[str]:
    if step == "multi_query":
        return [understanding.keywords, *(keyword_query(sub) for sub in understanding.sub_questions)]
    if step == "hyde":
        return [statement_form(understanding.question)]
    return [" ".join(understanding.entities)]


def _modelled(reply: BaseModel) -> list[str]:
    if isinstance(reply, ParaphraseReply):
        return reply.queries
    if isinstance(reply, HydeReply):
        return [reply.memory]
    assert isinstance(reply, StepBackReply)
    return [reply.question]


_REPLIES: dict[ExpansionStep, type[BaseModel]] = {
    "multi_query": ParaphraseReply,
    "hyde": HydeReply,
    "step_back": StepBackReply,
}


def expand(
    step: ExpansionStep, understanding: Understanding, model: ChatModel | None, *, paraphrases: int, max_tokens: int
) -> Expansion:
    """One expansion step: the model's queries when it gives usable ones, else the offline ones."""
    keep = _in_language(understanding.language)

    def check(reply: BaseModel) -> BaseModel:
        usable = []
        for text in _modelled(reply):
            try:
                usable.append(keep(text))
            except ValueError:
                continue
        if not usable:
            raise ValueError("no query in the query's language")
        return ParaphraseReply(queries=usable)

    asked = ask(model, _messages(step, understanding, paraphrases), _REPLIES[step], max_tokens=max_tokens,
                check=check)  # fmt: skip
    if asked.data is not None:
        queries = _modelled(asked.data)[: max(1, paraphrases) if step == "multi_query" else 1]
    else:
        queries = _offline(step, understanding)
    unique = tuple(dict.fromkeys(q.strip() for q in queries if q.strip() and keyword_query(q)))
    return Expansion(origin=step, queries=unique, step=asked.step(step, 1, unique))
