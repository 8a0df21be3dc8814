"""Decide, for each new fact, whether it adds, updates, deletes or repeats an existing memory.

Existing memories are shown under small integer ids (never UUIDs: small models copy them badly),
new facts under letters-free indexes, and the answer is one decision per new fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from memstrata.providers.llm import ChatMessage


class Decision(BaseModel):
    fact: int = Field(description="index of the new fact")
    action: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    target: int | None = Field(default=None, description="id of the existing memory for UPDATE, DELETE, NONE")
    text: str | None = Field(default=None, description="for UPDATE: the merged memory text, same language")


class DecisionList(BaseModel):
    decisions: list[Decision]


_SYSTEM = """You keep a user's memory consistent. You get EXISTING memories (with ids) and NEW facts (with
indexes). For every new fact output exactly one decision:
- ADD: the fact is new information.
- UPDATE: the fact changes or refines an existing memory (e.g. a new preference replaces an old one).
  Give target = the existing id and text = the new memory text, in the language of the new fact.
- DELETE: the fact says an existing memory is no longer true and there is nothing new to keep.
- NONE: the existing memory already says the same thing. Give target.
Never translate. Output JSON: {"decisions": [{"fact": 0, "action": "ADD", "target": null, "text": null}]}.

Example
EXISTING:
0: User likes coffee
1: 用户住在上海
NEW:
0: User now prefers tea instead of coffee
1: 用户住在上海
2: User has a cat named Momo
{"decisions": [{"fact": 0, "action": "UPDATE", "target": 0, "text": "User prefers tea instead of coffee"},
 {"fact": 1, "action": "NONE", "target": 1, "text": null},
 {"fact": 2, "action": "ADD", "target": null, "text": null}]}"""


def reconcile_prompt(existing: Sequence[str], new_facts: Sequence[str]) -> list[ChatMessage]:
    old = "\n".join(f"{i}: {text}" for i, text in enumerate(existing)) or "(none)"
    new = "\n".join(f"{i}: {text}" for i, text in enumerate(new_facts))
    return [ChatMessage("system", _SYSTEM), ChatMessage("user", f"EXISTING:\n{old}\nNEW:\n{new}")]


def repair_note(error: str) -> ChatMessage:
    return ChatMessage(
        "user",
        f"Your decisions were invalid: {error}. Answer again with exactly one decision per new fact, "
        "using only the ids listed under EXISTING.",
    )
