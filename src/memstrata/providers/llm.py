"""Chat models behind one small protocol, plus the parse-validate-repair loop every model shares.

A concrete model only implements ``call_once(messages, json_schema) -> (raw_text, usage)``; tolerant JSON
extraction, pydantic validation, the repair conversation and the attempt budget live here, written once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from memstrata.errors import ProviderError
from memstrata.providers.json_salvage import whole_items

M = TypeVar("M", bound=BaseModel)

# Anything longer is cut when quoted back to the model: a runaway answer must not blow up the repair prompt.
_MAX_QUOTED_CHARS = 4000
_MAX_JSON_CANDIDATES = 20


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(frozen=True)
class StructuredResult(Generic[M]):
    data: M
    raw: str  # the text of the attempt that validated
    usage: Usage  # summed over every attempt, failed ones included: they were paid for
    attempts: int
    model_id: str
    latency_s: float
    # True when the answer was cut off (a loop stopped, or max_tokens) and only its whole items were kept: what it
    # did not reach is missing, so the caller must not read the answer as complete.
    cut_off: bool = False


class ChatModel(Protocol):
    @property
    def model_id(self) -> str: ...

    def complete_structured(
        self,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> StructuredResult[M]: ...


class ModelOutputError(ProviderError):
    """The model never produced JSON that validates; the raw outputs are kept for debugging and logs."""

    def __init__(self, message: str, *, raw_outputs: list[str], last_error: str) -> None:
        super().__init__(message)
        self.raw_outputs = raw_outputs
        self.last_error = last_error


CallOnce = Callable[[Sequence[ChatMessage], dict[str, Any]], tuple[str, Usage]]


def json_schema_for(response_model: type[BaseModel]) -> dict[str, Any]:
    return response_model.model_json_schema()


def extract_json_object(text: str) -> Any:
    """The first balanced JSON object in ``text``, decoded.

    Small models wrap JSON in ```json fences or add a sentence around it; both are tolerated. Raises
    ``ValueError`` with a message fit to quote back to the model.
    """
    for region in _search_regions(text):
        candidates = 0
        start = region.find("{")
        while start != -1 and candidates < _MAX_JSON_CANDIDATES:
            candidates += 1
            end = _balanced_end(region, start)
            if end is None:
                break  # unbalanced from here on: later braces sit inside this unterminated object
            try:
                return json.loads(region[start:end])
            except json.JSONDecodeError:
                start = region.find("{", start + 1)
    if "{" not in text:
        raise ValueError("the answer contains no JSON object")
    raise ValueError("the answer contains no complete, valid JSON object (was it cut off or malformed?)")


def _search_regions(text: str) -> list[str]:
    # Fenced content first: prose before a fence may contain stray braces.
    regions = []
    fence = text.find("```")
    if fence != -1:
        body_start = text.find("\n", fence)
        body_end = text.find("```", fence + 3)
        if body_start != -1 and (body_end == -1 or body_start < body_end):
            regions.append(text[body_start + 1 : body_end if body_end != -1 else len(text)])
    regions.append(text)
    return regions


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the ``}`` closing the object opened at ``start``, ignoring braces inside strings."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def parse_structured(text: str, response_model: type[M]) -> M:
    """Extract and validate; raises ``ValueError`` (pydantic's ``ValidationError`` is one) on failure."""
    return response_model.model_validate(extract_json_object(text))


def _whole_items_of(raw: str, response_model: type[M]) -> M | None:
    """The finished items of an answer cut off before its end, when they validate: asked again, a model at
    temperature 0 loops or runs out of tokens the same way, and the items it finished are as good as in a whole
    answer. None for an answer that is whole but wrong (that one is asked to be mended) or finished no item."""
    start = raw.find("{")
    if start == -1 or _balanced_end(raw, start) is not None:
        return None
    kept = whole_items(raw[start:])
    if kept is None:
        return None
    try:
        return response_model.model_validate(json.loads(kept))
    except ValueError:
        return None


def describe_error(exc: ValueError) -> str:
    """A compact, URL-free error description the model can act on."""
    if isinstance(exc, ValidationError):
        lines = []
        for err in exc.errors(include_url=False)[:10]:
            where = ".".join(str(part) for part in err["loc"]) or "(root)"
            lines.append(f"{where}: {err['msg']}")
        return "; ".join(lines)
    return str(exc)


def repair_messages(
    messages: Sequence[ChatMessage], bad_output: str, error: str, schema: dict[str, Any]
) -> list[ChatMessage]:
    """The original conversation plus the failed answer and a request to fix it.

    Only the latest failure is shown (not every earlier one) so the prompt stays bounded on small local contexts.
    """
    quoted = bad_output[:_MAX_QUOTED_CHARS]
    request = (
        f"That answer was not valid: {error}\n"
        "Reply again with only one JSON object that matches this JSON Schema, with no text or code fences around it:\n"
        f"{json.dumps(schema, ensure_ascii=False, separators=(',', ':'))}"
    )
    return [*messages, ChatMessage("assistant", quoted), ChatMessage("user", request)]


def run_with_repair(
    call_once: CallOnce,
    messages: Sequence[ChatMessage],
    response_model: type[M],
    *,
    max_attempts: int = 3,
    model_id: str = "",
) -> StructuredResult[M]:
    """Call the model until its answer validates as ``response_model``, at most ``max_attempts`` times.

    Never returns a default: after the last failure ``ModelOutputError`` carries every raw output.
    Provider errors from ``call_once`` (network, auth) propagate unchanged; they are not the model's fault.
    """
    if max_attempts < 1:
        raise ValueError("max_attempts must be at least 1")
    schema = json_schema_for(response_model)
    started = time.perf_counter()
    usage = Usage()
    raw_outputs: list[str] = []
    conversation = list(messages)
    last_error = ""
    for attempt in range(1, max_attempts + 1):
        raw, call_usage = call_once(conversation, schema)
        usage += call_usage
        raw_outputs.append(raw)
        cut_off = False
        try:
            data = parse_structured(raw, response_model)
        except ValueError as exc:
            salvaged = _whole_items_of(raw, response_model)
            if salvaged is None:
                last_error = describe_error(exc)
                conversation = repair_messages(messages, raw, last_error, schema)
                continue
            data, cut_off = salvaged, True
        return StructuredResult(
            data=data,
            raw=raw,
            usage=usage,
            attempts=attempt,
            model_id=model_id,
            latency_s=time.perf_counter() - started,
            cut_off=cut_off,
        )
    raise ModelOutputError(
        f"{model_id or 'the model'} gave no valid {response_model.__name__} in {max_attempts} attempt(s); "
        f"last error: {last_error}. Try a larger model, a clearer prompt or a higher max_tokens.",
        raw_outputs=raw_outputs,
        last_error=last_error,
    )
