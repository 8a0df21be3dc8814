"""The judge: how does a new fact relate to one candidate memory? A model answers, or the rules do.

Pairs equal up to punctuation never reach a judge (they are NONE at once). The rest are asked in small
constrained questions (``prompts/compare_facts.py``); the answers only advise, ``write/decide.py`` decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memstrata.prompts.compare_facts import Relation, Verdict, compare_prompt
from memstrata.providers.llm import ChatModel, ModelOutputError
from memstrata.types import MemoryItem
from memstrata.write.decisions import NewFact
from memstrata.write.extract import CallStats

Pair = tuple[NewFact, MemoryItem]


class Reconciler(Protocol):
    name: str

    def judge(self, pairs: Sequence[Pair], stats: CallStats) -> list[Relation | None]:
        """One answer per pair, in order; None where there is no answer."""
        ...


class LLMReconciler:
    """One small question per pair (new fact, candidate memory); the system prompt is fixed, so a local model
    evaluates it once and every question after that costs only the pair and a few answer tokens."""

    def __init__(self, model: ChatModel, *, max_tokens: int = 16) -> None:
        self.model = model
        self.name = f"llm:{model.model_id}"
        self._max_tokens = max_tokens

    def judge(self, pairs: Sequence[Pair], stats: CallStats) -> list[Relation | None]:
        """A judge that never answers validly leaves its pair unanswered (the fact is kept, nothing is closed,
        the raw output is kept); a model that cannot be reached still fails the job."""
        answers: list[Relation | None] = []
        for fact, item in pairs:
            try:
                result = self.model.complete_structured(
                    compare_prompt(fact.text, item.text), Verdict, max_tokens=self._max_tokens
                )
            except ModelOutputError as exc:
                stats.record_failure(exc.raw_outputs, "judge")
                answers.append(None)
                continue
            stats.record(result, "judge")
            answers.append(result.data.relation())
        return answers


class RulesReconciler:
    """Without a model: the same key means the fact replaces the memory; anything else is left as is.
    (Equal texts never get here: they are NONE before any judge is asked.)"""

    name = "rules"

    def judge(self, pairs: Sequence[Pair], stats: CallStats) -> list[Relation | None]:
        return ["contradicts" if fact.key and fact.key == item.key else "unrelated" for fact, item in pairs]
