"""Edge checks for text and structured inputs. Everything here raises InvalidInputError.

Every string that reaches the store passes one of these first: the stores encode text as UTF-8
(a lone surrogate cannot be encoded) and PostgreSQL refuses NUL, so either would otherwise fail deep
inside a write as a server error. Errors name the field, down to the key inside a dict.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from memstrata.errors import InvalidInputError
from memstrata.query import Filters
from memstrata.types import INT64, as_utc, iso_datetime, string_problem

DEFAULT_MAX_TEXT_CHARS = 20_000

ModelT = TypeVar("ModelT", bound=BaseModel)


def is_blank(text: str) -> bool:
    """Nothing to read: whitespace, invisible format characters ("\u200b\u200b", which str.strip() keeps), control
    characters ("\x7f" alone was stored as a memory that showed as empty: a user trial) and combining marks with
    nothing to mark ("\u0301\u0301\u0301" was stored while a zero-width joiner alone was refused) only."""
    return all(char.isspace() or unicodedata.category(char) in ("Cf", "Cc", "Mn", "Me") for char in text)


def clean_text(
    value: object,
    *,
    field: str = "text",
    max_chars: int = DEFAULT_MAX_TEXT_CHARS,
    setting: str = "limits.max_text_chars",
) -> str:
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
    check_string(value, field)
    text = value.strip().removeprefix("\ufeff").strip()  # a byte-order mark read along from a file is no text
    if not text:
        raise InvalidInputError(f"{field} is empty; pass some non-whitespace text")
    if is_blank(text):
        raise InvalidInputError(
            f"{field} holds only invisible characters (zero-width spaces, joiners, control characters); pass text"
        )
    if len(text) > max_chars:
        raise InvalidInputError(
            f"{field} has {len(text)} characters, over the limit of {max_chars}; "
            f"split it, or raise {setting} in the configuration"
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
        location = ".".join(str(p) for p in err["loc"])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        elif err["type"] == "value_error":  # our own validators' words, without pydantic's "Value error, "
            message = message.removeprefix("Value error, ")
        # a rule of the whole value names no field: "invalid scope: value: a scope needs…" showed pydantic's word
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts)


def guarded(build: Callable[[], ModelT], *, what: str) -> ModelT:
    """Run a model constructor, reporting validation failures as InvalidInputError."""
    try:
        return build()
    except ValidationError as exc:
        raise InvalidInputError(f"invalid {what}: {describe_validation_error(exc)}") from None


def check_string(value: str, field: str) -> str:
    problem = string_problem(value)
    if problem is not None:
        raise InvalidInputError(f"{field} {problem}")
    return value


# JSON nested deeper than this is refused: pydantic stops serialising at a few hundred levels, so a memory with
# deeper metadata was stored and then broke every read of its scope over REST (500). Real metadata is shallow.
MAX_NESTING = 32


def check_strings(value: object, field: str, *, depth: int = 0) -> None:
    """Every string inside ``value`` (dict keys included, at any depth) must be storable text, every integer fit
    in 64 bits (a larger one was stored, then a filter on it failed in the database), and containers nest at most
    :data:`MAX_NESTING` levels."""
    if isinstance(value, Mapping | list | tuple | set | frozenset) and depth >= MAX_NESTING:
        outermost = re.split(r"[.\[]", field)[0]
        raise InvalidInputError(f"{outermost} nests deeper than {MAX_NESTING} levels; flatten it")
    if isinstance(value, str):
        check_string(value, field)
    elif isinstance(value, int) and not isinstance(value, bool) and value not in INT64:
        raise InvalidInputError(f"{field}: {value} does not fit in 64 bits; store a number this large as a string")
    elif isinstance(value, BaseModel):
        check_strings(value.model_dump(), field, depth=depth)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                check_string(key, f"{field} key {key!r}")
            check_strings(item, f"{field}.{key}", depth=depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for position, item in enumerate(value):
            check_strings(item, f"{field}[{position}]", depth=depth + 1)


def clean_id(value: object, *, field: str = "memory_id", max_chars: int = 256) -> str:
    """An id as callers pass it: a non-empty string of storable text, not absurdly long."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    text = check_string(value, field).strip()
    if not text:
        raise InvalidInputError(f"{field} is empty; pass an id as shown by list or search")
    if len(text) > max_chars:
        raise InvalidInputError(f"{field} has {len(text)} characters; ids are at most {max_chars}")
    return text


def clean_label(value: str | None, *, field: str, max_chars: int = 1000) -> str | None:
    """Short free text kept beside a change (a reason, an actor): storable and bounded, or None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}")
    if len(value) > max_chars:
        raise InvalidInputError(f"{field} has {len(value)} characters, over the limit of {max_chars}; shorten it")
    return check_string(value, field)


def clean_time(value: datetime | str | None, *, field: str) -> datetime | None:
    """A datetime (or ISO 8601 text, as a turn's timestamp may be) converted to UTC, refused (not overflowing later)
    when UTC cannot represent it."""

    if value is None:
        return None
    if isinstance(value, str):  # add(event_time="2024-01-01T00:00:00+08:00") was refused where a turn's was read
        try:
            value = iso_datetime(value)
        except ValueError as exc:
            raise InvalidInputError(f"{field}: {exc}") from None
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{field} must be a datetime, got {type(value).__name__}")
    try:
        return as_utc(value)
    except ValueError as exc:
        raise InvalidInputError(f"{field}: {exc}") from None


def check_count(value: object, field: str, low: int, high: int) -> int:
    """A whole number within bounds (limits, offsets, budgets): the stores cannot take Python's big ints."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{field} must be a whole number, got {type(value).__name__}")
    if not low <= value <= high:
        raise InvalidInputError(f"{field} must be between {low} and {high}, got {value}")
    return value


def checked_filters(filters: object) -> Filters:
    """Search and list filters, validated, with every string in them storable text."""

    if filters is not None and not isinstance(filters, Filters | Mapping):
        raise InvalidInputError(f"filters must be a dict or Filters, got {type(filters).__name__}")
    check_strings(filters or {}, "filters")
    return parse_model(Filters, filters or {}, what="filters")
