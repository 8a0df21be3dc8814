"""One model call of deep search, with its cost measured and its failure kept as a reason.

A model that is not configured, cannot be reached, or answers garbage (after the repair attempts of
``complete_structured``) gives ``data=None`` and a ``failure`` the trace records; the caller then runs its
offline heuristic. A ``check`` may refuse an answer that parsed but cannot be used (another language, an
entity the query never named): the model advises, the engine decides.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic

from memstrata.deep.trace import Source, StepName, StepTrace
from memstrata.errors import ProviderError
from memstrata.providers.llm import ChatMessage, ChatModel, M, Usage

NO_MODEL = "no chat model is configured"


@dataclass(frozen=True)
class Asked(Generic[M]):
    data: M | None
    failure: str | None
    usage: Usage
    seconds: float
    model_id: str | None

    def step(
        self, name: StepName, round_number: int, output: Sequence[str], *, source: Source | None = None
    ) -> StepTrace:
        """The trace of this call as step ``name``; ``source`` defaults to model when it answered."""
        return StepTrace(
            step=name,
            round=round_number,
            source=source or ("model" if self.data is not None else "heuristic"),
            output=tuple(output),
            fallback=self.failure if self.model_id is not None else None,
            model_id=self.model_id,
            calls=1 if self.model_id is not None else 0,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            seconds=round(self.seconds, 3),
        )


def ask(
    model: ChatModel | None,
    messages: Sequence[ChatMessage],
    reply_type: type[M],
    *,
    max_tokens: int,
    check: Callable[[M], M] | None = None,
) -> Asked[M]:
    if model is None:
        return Asked(None, NO_MODEL, Usage(), 0.0, None)
    started = time.perf_counter()
    try:
        result = model.complete_structured(messages, reply_type, max_tokens=max_tokens)
    except ProviderError as exc:  # unreachable, timed out, or no valid JSON after the repair attempts
        return Asked(None, f"{type(exc).__name__}: {exc}"[:500], Usage(), time.perf_counter() - started, model.model_id)
    # The model's own latency (repair attempts included): the same as the wall time here, and still true when a
    # benchmark replays recorded answers.
    seconds = result.latency_s
    try:
        data = check(result.data) if check is not None else result.data
    except ValueError as exc:
        return Asked(None, f"answer not used: {exc}"[:500], result.usage, seconds, model.model_id)
    return Asked(data, None, result.usage, seconds, model.model_id)
