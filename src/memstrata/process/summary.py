"""A finished task's summary: written by the configured model when there is one, extractive otherwise.

The extractive summary is built from the record itself: goal, outcome, the path that worked and the
dead ends, each in its own words. A model summary is a small, local question ("summarise this one
task") and the engine checks the answer before using it: it must be non-empty text in the goal's
language. A model that fails or answers badly leaves the extractive summary in place, with the
reason kept on the task (``summary_source``): nothing recorded is lost either way, the chain stays.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from memstrata.errors import ProviderError
from memstrata.lexical import has_han
from memstrata.process.trees import TaskTree
from memstrata.providers.llm import ChatMessage, ChatModel
from memstrata.records.process import Step

EXTRACTIVE = "extractive"
_MAX_LINE = 200
_MAX_SUMMARY = 2000


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _MAX_LINE else flat[: _MAX_LINE - 1] + "…"


def extractive_summary(tree: TaskTree, path: Sequence[Step]) -> str:
    """Goal, outcome, what worked (✓) and the dead ends (✗), one line each with what it gave, in the record's own
    words."""
    task = tree.task
    lines = [_line(task.goal)]
    if task.outcome:
        lines.append(f"→ {_line(task.outcome)}")
    lines += [f"✓ {_step_line(step)}" for step in path]
    lines += [f"✗ {_step_line(step)}" for step in tree.steps if step.dead_end]
    return "\n".join(lines)


def _step_line(step: Step) -> str:
    """What a step did and what came of it: without the output, what a step found ("Table 3: recall@10 0.95 at 3 ms")
    was in no searchable text once the task was compressed."""
    found = f" → {_line(step.output)}" if step.output and step.output.strip() else ""
    return f"{step.action}: {_line(step.input)}{found}"


class SummaryAnswer(BaseModel):
    summary: str = Field(description="two to four sentences, in the language of the task")


_SYSTEM = (
    "You summarise how an agent worked through one task, for its own future reference. Say what the goal was, "
    "what finally worked, and which attempts were dead ends, in two to four sentences. Write in the language of "
    'the task (Chinese stays Chinese). Output JSON: {"summary": "..."}.'
)


def summary_prompt(tree: TaskTree, path: Sequence[Step]) -> list[ChatMessage]:
    return [ChatMessage("system", _SYSTEM), ChatMessage("user", extractive_summary(tree, path))]


def _refusal(answer: str, goal: str) -> str | None:
    """Why a model summary cannot stand in for the chain, or None when it can."""
    if not answer.strip():
        return "empty"
    if len(answer) > _MAX_SUMMARY:
        return f"over {_MAX_SUMMARY} characters"
    if has_han(goal) and not has_han(answer):
        return "not in the task's language (Chinese)"
    if not has_han(goal) and sum(has_han(char) for char in answer) > len(answer) / 2:
        return "not in the task's language"
    return None


def write_summary(tree: TaskTree, path: Sequence[Step], model: ChatModel | None, *, max_tokens: int) -> tuple[str, str]:
    """(summary, source): the model's when it answers well, else the extractive one with the reason."""
    extractive = extractive_summary(tree, path)
    if model is None:
        return extractive, EXTRACTIVE
    try:
        result = model.complete_structured(summary_prompt(tree, path), SummaryAnswer, max_tokens=max_tokens)
    except ProviderError as exc:
        return extractive, f"{EXTRACTIVE} (model {model.model_id} failed: {str(exc)[:200]})"
    answer = " ".join(result.data.summary.split())
    refusal = _refusal(answer, tree.task.goal)
    if refusal is not None:
        return extractive, f"{EXTRACTIVE} (model {model.model_id} summary refused: {refusal})"
    return answer, f"model:{model.model_id}"
