"""Extraction: raw turns in, candidate facts out. A model does it, or the rules fallback does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memstrata.graph.extracted import Mention, Triple
from memstrata.graph.vocabulary import canonical_relation
from memstrata.lexical import has_han
from memstrata.prompts.extract_facts import ExtractedRelation, FactList, FactsAndRelations, extraction_prompt
from memstrata.providers.llm import ChatMessage, ChatModel, StructuredResult
from memstrata.types import Message
from memstrata.write.decisions import Extraction, NewFact
from memstrata.write.smalltalk import is_small_talk


@dataclass
class CallStats:
    """Model cost of one job, recorded in its result so it can be observed and benchmarked."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    seconds: float = 0.0
    raw_outputs: list[str] = field(default_factory=list)

    def record(self, result: StructuredResult[Any]) -> None:
        self.model_calls += 1
        self.attempts += result.attempts
        self.prompt_tokens += result.usage.prompt_tokens
        self.completion_tokens += result.usage.completion_tokens
        self.seconds += result.latency_s
        self.raw_outputs.append(result.raw)


class Extractor(Protocol):
    name: str

    def extract(self, turns: Sequence[Message], *, role: str, today: datetime, stats: CallStats) -> Extraction:
        """Facts (and, if it can, relation triples) said by ``role`` in ``turns``, in their own language."""
        ...


def _clean(text: str) -> str:
    return " ".join(text.split())  # small models add stray leading spaces and line breaks


class LLMExtractor:
    """``graph=True`` asks the same call for relation triples too (user turns), with a larger token budget."""

    def __init__(self, model: ChatModel, *, max_tokens: int = 600, graph: bool = True) -> None:
        self.model = model
        self.name = f"llm:{model.model_id}"
        self.graph = graph
        self._max_tokens = max_tokens

    def extract(self, turns: Sequence[Message], *, role: str, today: datetime, stats: CallStats) -> Extraction:
        """One call per language present: a small model given Chinese and English turns together tends to
        write every fact in one language, so each language gets its own prompt and keeps its own words."""
        worth = [turn for turn in turns if not is_small_talk(turn.content)]
        chinese = [turn for turn in worth if has_han(turn.content)]
        other = [turn for turn in worth if not has_han(turn.content)]
        found = Extraction()
        for group in (chinese, other):
            if group:
                found += self._extract(group, role, today, stats)
        return found

    def _extract(self, turns: Sequence[Message], role: str, today: datetime, stats: CallStats) -> Extraction:
        graph = self.graph and role == "user"
        schema: type[FactList] = FactsAndRelations if graph else FactList
        max_tokens = self._max_tokens * 2 if graph else self._max_tokens
        messages = extraction_prompt(turns, role=role, today=today, graph=graph)
        result = self.model.complete_structured(messages, schema, max_tokens=max_tokens)
        stats.record(result)
        translated = _translated(result.data, turns)
        if translated:
            # Small models sometimes translate. Ask once to restore the original language; if the second
            # answer is no better, keep the first: a translated fact is still better than a lost one.
            retry = [*messages, ChatMessage("assistant", result.raw), _language_note(translated)]
            second = self.model.complete_structured(retry, schema, max_tokens=max_tokens)
            stats.record(second)
            if len(_translated(second.data, turns)) < len(translated):
                result = second
        facts = []
        for fact in result.data.facts:
            text = _clean(fact.text)
            if not text:
                continue
            sources = [turns[i - 1].id for i in fact.sources if 1 <= i <= len(turns)]
            facts.append(
                NewFact(
                    text=text,
                    kind=fact.kind,
                    confidence=fact.confidence,
                    message_ids=tuple(sources) or tuple(turn.id for turn in turns),
                    key=fact.key,
                    event_time=fact.event_time,
                )
            )
        relations = result.data.relations if isinstance(result.data, FactsAndRelations) else []
        return Extraction(facts, [t for r in relations if (t := _triple(r, turns, self.name)) is not None])


def _triple(found: ExtractedRelation, turns: Sequence[Message], origin: str) -> Triple | None:
    subject, target = _clean(found.subject), _clean(found.object)
    if not subject or not target:
        return None
    sources = tuple(turns[i - 1].id for i in found.sources if 1 <= i <= len(turns)) or tuple(t.id for t in turns)
    return Triple(
        Mention(subject, found.subject_type),
        canonical_relation(found.relation),
        Mention(target, found.object_type),
        0.8,
        sources,
        ended=found.ended,
        origin=origin,
    )


def _translated(facts: FactList, turns: Sequence[Message]) -> list[int]:
    """Indexes of facts written in Chinese although none of their source turns contains Chinese."""
    flagged = []
    for index, fact in enumerate(facts.facts):
        sources = [turns[i - 1] for i in fact.sources if 1 <= i <= len(turns)] or list(turns)
        if has_han(fact.text) and not any(has_han(turn.content) for turn in sources):
            flagged.append(index)
    return flagged


def _language_note(indexes: list[int]) -> ChatMessage:
    numbers = ", ".join(str(i) for i in indexes)
    return ChatMessage(
        "user",
        f"Facts {numbers} are not in the language of the conversation. Answer again with the same facts, "
        "each written in the language its turn was said in. Never translate.",
    )
