"""Extraction: raw turns in, candidate facts out. A model does it, or the rules fallback does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memstrata.prompts.extract_facts import FactList, extraction_prompt
from memstrata.providers.llm import ChatModel, StructuredResult
from memstrata.types import Message
from memstrata.write.decisions import NewFact


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

    def extract(self, turns: Sequence[Message], *, role: str, today: datetime, stats: CallStats) -> list[NewFact]:
        """Facts said by ``role`` in ``turns`` (all of that role), in their own language."""
        ...


def _clean(text: str) -> str:
    return " ".join(text.split())  # small models add stray leading spaces and line breaks


class LLMExtractor:
    def __init__(self, model: ChatModel, *, max_tokens: int = 600) -> None:
        self.model = model
        self.name = f"llm:{model.model_id}"
        self._max_tokens = max_tokens

    def extract(self, turns: Sequence[Message], *, role: str, today: datetime, stats: CallStats) -> list[NewFact]:
        if not turns:
            return []
        result = self.model.complete_structured(
            extraction_prompt(turns, role=role, today=today), FactList, max_tokens=self._max_tokens
        )
        stats.record(result)
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
        return facts
