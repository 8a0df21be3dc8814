"""Agentic (LLM) chunks: the configured model reads numbered passages and says where the topic changes.

chonkie's ``SlumberChunker`` (LumberChunker's method: show the model about one chunk's worth of
passages, ask for the first passage that starts a new topic, continue from there) drives a
memstrata chat model through a small adapter, so the bundled local model, any OpenAI-compatible
server and the scripted test server all work. The model only chooses among passage numbers: it
cannot change, drop or translate text.

chonkie swallows every error and keeps the passages together; memstrata keeps that fallback for a
malformed answer but reports it in the result's notes, and an unreachable model fails the document.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel

from memstrata.errors import ProviderError
from memstrata.knowledge.chunking.base import BILINGUAL, ChunkSize, Delimiters, Piece, SplitResult, finish
from memstrata.knowledge.chunking.recursive import recursive_rules
from memstrata.knowledge.tokens import count_tokens
from memstrata.providers.llm import ChatMessage, ChatModel, ModelOutputError


class SplitIndex(BaseModel):
    split_index: int


class _Unreachable(BaseException):
    """Escapes chonkie's ``except Exception`` so a dead model stops the document at the first call
    instead of timing out once per passage group."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(str(error))
        self.error = error


def _genie(model: ChatModel, max_tokens: int) -> Any:
    from chonkie.genie import BaseGenie

    class ModelGenie(BaseGenie):
        def __init__(self) -> None:
            self.calls = 0
            self.invalid: list[str] = []

        def generate(self, prompt: str) -> str:
            return str(self.generate_json(prompt, SplitIndex)["split_index"])

        def generate_json(self, prompt: str, schema: Any) -> dict[str, Any]:
            self.calls += 1
            try:
                result = model.complete_structured([ChatMessage("user", prompt)], SplitIndex, max_tokens=max_tokens)
            except ModelOutputError as exc:
                self.invalid.append(exc.last_error)
                raise
            except ProviderError as exc:
                raise _Unreachable(exc) from exc
            return result.data.model_dump()

    return ModelGenie()


class AgenticChunker:
    name = "agentic"

    def __init__(
        self,
        model: ChatModel,
        size: ChunkSize | None = None,
        *,
        delimiters: Delimiters = BILINGUAL,
        max_tokens: int = 32,
    ) -> None:
        from chonkie import SlumberChunker

        self.size = size or ChunkSize()
        self.model_id = model.model_id
        self._genie = _genie(model, max_tokens)
        self._chonkie = SlumberChunker(
            genie=self._genie,
            tokenizer=cast(Any, count_tokens),
            chunk_size=self.size.size,
            rules=recursive_rules(delimiters),
            candidate_size=max(32, self.size.size // 4),
            min_characters_per_chunk=8,
            extract_mode="json",
            max_retries=1,  # the chat model already repairs invalid JSON itself
            verbose=False,
        )

    def split(self, text: str) -> SplitResult:
        if not text.strip():
            return SplitResult([])
        calls_before, invalid_before = self._genie.calls, len(self._genie.invalid)
        try:
            raw = [Piece(c.start_index, c.end_index) for c in self._chonkie.chunk(text)]
        except _Unreachable as exc:
            raise ProviderError(
                f"agentic chunking needs the model {self.model_id}, which failed: {exc.error}; "
                "check the model configuration or choose another chunker (--chunker structure)"
            ) from exc.error
        invalid = self._genie.invalid[invalid_before:]
        notes = (
            (
                f"{self.model_id} gave {len(invalid)} unusable topic boundaries (last: {invalid[-1]}); "
                "those passages were kept together, no text was lost",
            )
            if invalid
            else ()
        )
        return SplitResult(finish(text, raw, self.size), notes=notes, model_calls=self._genie.calls - calls_before)
