"""Reconcile: new facts against the similar memories already in the scope.

Exact duplicates never reach a model. The rest are shown to the model with the neighbours found
by vector search, under small integer ids; its decisions are validated as a set and retried once
with the validation error quoted back before the job gives up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memstrata.indexing import content_hash, normalised
from memstrata.prompts.reconcile_memories import DecisionList, reconcile_prompt, repair_note
from memstrata.providers.llm import ChatModel
from memstrata.types import MemoryItem
from memstrata.write.decisions import (
    Add,
    InvalidDecisionsError,
    NewFact,
    Noop,
    Resolved,
    Update,
    resolve_decisions,
)
from memstrata.write.extract import CallStats


class Reconciler(Protocol):
    name: str

    def reconcile(
        self, facts: Sequence[NewFact], existing: Sequence[MemoryItem], stats: CallStats
    ) -> list[Resolved]: ...


def split_exact_duplicates(
    facts: Sequence[NewFact], known_hashes: dict[str, MemoryItem]
) -> tuple[list[Resolved], list[NewFact]]:
    """Facts equal (after normalisation) to a live memory, or to an earlier fact of the batch, are NONE."""
    decided: list[Resolved] = []
    fresh: list[NewFact] = []
    seen: set[str] = set()
    for fact in facts:
        digest = content_hash(fact.text)
        if digest in known_hashes:
            decided.append(Noop(fact, known_hashes[digest], "exact duplicate of a stored memory"))
        elif digest in seen:
            decided.append(Noop(fact, None, "repeated within the batch"))
        else:
            seen.add(digest)
            fresh.append(fact)
    return decided, fresh


class LLMReconciler:
    def __init__(self, model: ChatModel, *, max_tokens: int = 600, repair_attempts: int = 1) -> None:
        self.model = model
        self.name = f"llm:{model.model_id}"
        self._max_tokens = max_tokens
        self._repair_attempts = repair_attempts

    def reconcile(self, facts: Sequence[NewFact], existing: Sequence[MemoryItem], stats: CallStats) -> list[Resolved]:
        if not facts:
            return []
        if not existing:
            return [Add(fact) for fact in facts]  # nothing to compare with: no model call needed
        messages = reconcile_prompt([item.text for item in existing], [fact.text for fact in facts])
        for attempt in range(self._repair_attempts + 1):
            result = self.model.complete_structured(messages, DecisionList, max_tokens=self._max_tokens)
            stats.record(result)
            try:
                return resolve_decisions(result.data.decisions, facts, existing)
            except InvalidDecisionsError as exc:
                if attempt == self._repair_attempts:
                    raise InvalidDecisionsError(f"{exc} (raw output: {result.raw[:500]})") from None
                messages = [*messages, repair_note(str(exc))]
        raise AssertionError("unreachable")


class RulesReconciler:
    """Without a model: same key -> UPDATE, same normalised text -> NONE, anything else -> ADD."""

    name = "rules"

    def reconcile(self, facts: Sequence[NewFact], existing: Sequence[MemoryItem], stats: CallStats) -> list[Resolved]:
        by_key = {item.key: item for item in existing if item.key}
        by_text = {normalised(item.text): item for item in existing}
        resolved: list[Resolved] = []
        updated: set[str] = set()
        for fact in facts:
            keyed = by_key.get(fact.key) if fact.key else None
            if keyed is not None and keyed.id not in updated:
                updated.add(keyed.id)
                resolved.append(Update(fact, keyed, fact.text))
            elif normalised(fact.text) in by_text:
                resolved.append(Noop(fact, by_text[normalised(fact.text)], "same text"))
            else:
                resolved.append(Add(fact))
        return resolved
