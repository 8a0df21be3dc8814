"""Index units: the memory rows that make process records searchable through the ordinary read path.

A unit's text is what retrieval compares (keyword index and vector); its metadata names the record it
stands for, so a hit leads back to its task and step. Units are written in the same transaction as their
record and embedded later (see ``process/indexing.py``). Text is never translated: a Chinese goal is
indexed in Chinese.
"""

from __future__ import annotations

from datetime import datetime

from memstrata.records.history import history_event
from memstrata.records.process import STEP_KIND, TASK_KIND
from memstrata.types import HistoryAction, HistoryEvent, JsonDict, MemoryItem, Scope, new_id

ACTOR = "process"


def step_text(input_text: str, reasoning: str | None) -> str:
    """What a step tried and why: recorded steps and planned steps are compared on this same text, so
    "same input or intent" is one similarity. The action type is matched exactly, not through the text."""
    return f"{input_text}\n{reasoning}" if reasoning else input_text


def task_text(goal: str, context: str | None) -> str:
    return f"{goal}\n{context}" if context else goal


def unit(kind: str, scope: Scope, text: str, metadata: JsonDict, now: datetime, *, max_chars: int) -> MemoryItem:
    """A new active unit. Text longer than the index takes is cut there; the record keeps all of it."""
    return MemoryItem(
        id=new_id(),
        scope=scope,
        kind=kind,
        text=text[:max_chars].strip() or text[:max_chars],
        metadata=metadata,
        created_at=now,
        updated_at=now,
        valid_from=now,
    )


def task_unit(scope: Scope, task_id: str, task_type: str, text: str, now: datetime, *, max_chars: int) -> MemoryItem:
    return unit(TASK_KIND, scope, text, {"task_id": task_id, "task_type": task_type}, now, max_chars=max_chars)


def step_unit(
    scope: Scope, task_id: str, step_id: str, action: str, text: str, now: datetime, *, max_chars: int
) -> MemoryItem:
    metadata = {"task_id": task_id, "step_id": step_id, "action": action}
    return unit(STEP_KIND, scope, text, metadata, now, max_chars=max_chars)


def added(item: MemoryItem, now: datetime) -> HistoryEvent:
    return history_event(item, HistoryAction.ADD, at=now, actor=ACTOR)
