"""Edge checks for text and structured inputs. Everything here raises InvalidInputError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memstrata.errors import InvalidInputError

DEFAULT_MAX_TEXT_CHARS = 20_000

ModelT = TypeVar("ModelT", bound=BaseModel)


def clean_text(value: object, *, field: str = "text", max_chars: int = DEFAULT_MAX_TEXT_CHARS) -> str:
    """Return ``value`` as text fit to store, or raise an error that says how to fix it.

    Bytes must be valid UTF-8. Text is kept verbatim (no translation, no normalisation) apart
    from trimming surrounding whitespace.
    """
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(
                f"{field} is not valid UTF-8 (byte {exc.start}); decode it to text before storing"
            ) from None
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{field} contains an unpaired surrogate at position {exc.start} (broken UTF-8); "
            "fix the encoding of the source text"
        ) from None
    if "\x00" in value:
        raise InvalidInputError(f"{field} contains a NUL character at position {value.index(chr(0))}; remove it")
    text = value.strip()
    if not text:
        raise InvalidInputError(f"{field} is empty; pass some non-whitespace text")
    if len(text) > max_chars:
        raise InvalidInputError(
            f"{field} has {len(text)} characters, over the limit of {max_chars}; "
            "split it, or raise limits.max_text_chars in the configuration"
        )
    return text


def parse_model(model: type[ModelT], data: Any, *, what: str) -> ModelT:
    """Validate ``data`` into ``model``, turning pydantic's error into a one-line InvalidInputError."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {what}: {describe_validation_error(exc)}") from None


def describe_validation_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        location = ".".join(str(p) for p in err["loc"]) or "value"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        parts.append(f"{location}: {message}")
    return "; ".join(parts)


def guarded(build: Callable[[], ModelT], *, what: str) -> ModelT:
    """Run a model constructor, reporting validation failures as InvalidInputError."""
    try:
        return build()
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {what}: {describe_validation_error(exc)}") from None
