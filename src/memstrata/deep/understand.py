"""Query understanding: the real question, its entities, sub-questions and time range, in the query's language.

The offline heuristic (deep/heuristics.py) always runs; the model, when there is one, proposes a better
question and sub-questions. Its answer is checked before use: a question in another language than the
query is refused (the small model likes to answer Chinese in English), entities the query never names are
dropped, and the time range is resolved by the engine's own parser, never taken from the model.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from memstrata.deep.asking import Asked, ask
from memstrata.deep.heuristics import (
    Language,
    find_entities,
    is_transcript,
    keyword_query,
    language_of,
    split_questions,
    strip_chatter,
)
from memstrata.deep.trace import StepTrace, TimeRangeOut, Understanding
from memstrata.lexical import has_han
from memstrata.lifecycle.timeparse import find_time_span
from memstrata.providers.llm import ChatMessage, ChatModel, Usage


class UnderstandReply(BaseModel):
    question: str = Field(min_length=1, max_length=400)
    entities: list[str] = Field(default_factory=list, max_length=8)
    sub_questions: list[str] = Field(default_factory=list, max_length=4)
    time: str = Field(default="", max_length=80)


_SYSTEM = {
    "en": "You turn a message to a memory assistant into a search request. Answer in JSON.",
    "zh": "你把用户发给记忆助手的消息整理成检索请求。用 JSON 回答。",
}
_ASK = {
    "en": (
        "Message: <<<{query}>>>\n"
        "question: the one thing the message asks, as a short English question; leave out small talk\n"
        "entities: names of people, places and things the question is about, copied from the message\n"
        "sub_questions: if it asks two or more things, each as a short question; else []\n"
        'time: the time words of the question copied from the message (like "last week"); else ""'
    ),
    "zh": (
        "消息：<<<{query}>>>\n"
        "question：消息真正想问的一件事，写成简短的中文问句，去掉寒暄和闲聊\n"
        "entities：问题涉及的人名、地名和事物，从消息中原样摘出\n"
        "sub_questions：如果问了两件或以上的事，每件写成一个简短问句；否则为 []\n"
        'time：问题里的时间词（如"上周"），从消息中原样摘出；没有则为 ""'
    ),
}


def understand_messages(query: str) -> list[ChatMessage]:
    language = language_of(query)
    return [ChatMessage("system", _SYSTEM[language]), ChatMessage("user", _ASK[language].format(query=query))]


def same_language(text: str, language: Language) -> bool:
    """Chinese queries need Chinese text (names in Latin letters are fine), English ones no Chinese."""
    return has_han(text) if language == "zh" else not has_han(text)


def _mentioned(name: str, query: str) -> bool:
    return name.strip().lower() in query.lower()


def check_reply(reply: UnderstandReply, query: str) -> UnderstandReply:
    """Refuse a question in another language; keep only entities and sub-questions that can be trusted."""
    language = language_of(query)
    question = reply.question.strip()
    if not same_language(question, language):
        raise ValueError(f"the question {question!r} is not in the query's language ({language})")
    entities = [name.strip() for name in reply.entities if name.strip() and _mentioned(name, query)]
    subs = [
        sub.strip()
        for sub in reply.sub_questions
        if sub.strip() and sub.strip() != question and same_language(sub, language) and keyword_query(sub)
    ]
    return UnderstandReply(question=question, entities=entities, sub_questions=subs if len(subs) > 1 else [],
                           time=reply.time.strip())  # fmt: skip


def _time_range(texts: list[str], now: datetime) -> TimeRangeOut | None:
    for text in texts:
        if text and (span := find_time_span(text, now)) is not None:
            return TimeRangeOut(start=span.start, end=span.end, expression=span.expression)
    return None


def heuristic_understanding(query: str, now: datetime) -> Understanding:
    transcript = is_transcript(query)
    question = query.strip() if transcript else strip_chatter(query)
    return Understanding(
        question=question,
        language=language_of(query),
        entities=tuple(find_entities(question)),
        sub_questions=() if transcript else tuple(split_questions(question)),
        time_range=_time_range([query], now),
        keywords=keyword_query(question),
        source="heuristic",
    )


def understand(
    query: str, now: datetime, model: ChatModel | None, *, use_model: bool, max_tokens: int
) -> tuple[Understanding, StepTrace]:
    """The understanding deep search works from, and the trace of how it was reached."""
    offline = heuristic_understanding(query, now)
    if not use_model or model is None:
        reason = None if use_model else "deep.understand is off"
        asked: Asked[UnderstandReply] = Asked(None, reason, Usage(), 0.0, None)
    else:
        asked = ask(model, understand_messages(query), UnderstandReply, max_tokens=max_tokens,
                    check=lambda reply: check_reply(reply, query))  # fmt: skip
    reply = asked.data
    if reply is None:
        return offline, asked.step("understand", 1, [offline.question, *offline.sub_questions])
    if is_transcript(query):
        # A pasted conversation stays the question (its turns are what memory should match) and the model's
        # reading of it is searched beside it: on MADial the reading alone lost the dialogue's context.
        question, subs = offline.question, tuple(dict.fromkeys([reply.question, *reply.sub_questions]))
    else:
        question, subs = reply.question, tuple(reply.sub_questions) or offline.sub_questions
    understood = Understanding(
        question=question,
        language=offline.language,
        entities=tuple(dict.fromkeys([*reply.entities, *offline.entities])),
        sub_questions=subs,
        time_range=offline.time_range or _time_range([reply.time], now),
        keywords=keyword_query(reply.question),
        source="model",
    )
    return understood, asked.step("understand", 1, [understood.question, *understood.sub_questions])
