"""Turns sent to the extractor in calls that fit the model's context.

A job may hold many turns (``write.batch_jobs`` jobs of a scope together) and a turn may be 20,000 characters.
Sent whole, a request past the model's context failed every time, retry or not, and took the facts of the other
turns of the job with it (a user trial on the bundled model, 4,096 tokens: "request (4502 tokens) exceeds the
available context size"). Turns are grouped, in order, into calls of at most ``budget`` estimated tokens; a turn
over the budget is cut at its strongest breaks (paragraph, sentence, clause) into pieces, each sent as the same
turn (same id and time), so the facts of every piece point back at it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from memstrata.lifecycle.session import estimate_tokens
from memstrata.sentences import split_spans
from memstrata.types import Message

_PER_TURN = 8  # the turn's number, speaker and line break in the prompt
_SYSTEM = 700  # the extraction prompt's system message, estimated (prompts/extract_facts.py: 537-628)
_NOTE = 150  # a correction note (a retry sends the first answer back with it)


def input_budget(n_ctx: int, max_output_tokens: int) -> int:
    """Estimated tokens of turns one extraction call may carry in a context of ``n_ctx``: less the system prompt,
    room for the answer twice and a note (a retry after a fault sends the first answer back), and a fifth for the
    estimate's error (text of odd tokens, such as "x x x", costs more than it estimates)."""
    return max(200, int((n_ctx - _SYSTEM - 2 * max_output_tokens - _NOTE) * 0.8))


def turn_batches(turns: Sequence[Message], budget: int) -> list[list[Message]]:
    """``turns`` (pieces of long ones in their place), in consecutive groups of at most ``budget`` tokens each."""
    batches: list[list[Message]] = []
    current: list[Message] = []
    used = 0
    for piece in _pieces(turns, budget):
        cost = estimate_tokens(piece.content) + _PER_TURN
        if current and used + cost > budget:
            batches.append(current)
            current, used = [], 0
        current.append(piece)
        used += cost
    if current:
        batches.append(current)
    return batches


def _pieces(turns: Sequence[Message], budget: int) -> Iterator[Message]:
    for turn in turns:
        yield from _fitting(turn, budget)


def _fitting(turn: Message, budget: int) -> Iterator[Message]:
    tokens = estimate_tokens(turn.content) + _PER_TURN
    if tokens <= budget or len(turn.content) < 2:
        yield turn
        return
    # characters per piece from the turn's own characters per token (Chinese ~1, English ~4); a piece denser than
    # the turn (its Chinese half) is cut again
    max_chars = max(1, min(len(turn.content) - 1, len(turn.content) * max(1, budget - _PER_TURN) // tokens))
    for start, end in split_spans(turn.content, max_chars):
        if turn.content[start:end].strip():
            yield from _fitting(turn.model_copy(update={"content": turn.content[start:end]}), budget)
