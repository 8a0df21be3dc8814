"""Queries are objects: filters, search requests and list requests, validated once at the edge."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from memstrata.han import HAN_RUN
from memstrata.patterns import lazy_pattern
from memstrata.types import INT64, Frozen, MemoryStatus, Scope, UtcDatetime

_IDENTIFIER = lazy_pattern(r"^[A-Za-z_][A-Za-z0-9_\-]{0,63}$")
KEY_PATTERN = lazy_pattern(r"^[^\s:]+(?::[^\s:]+){1,7}$")

MetadataValue = str | int | float | bool | None


class TimeRange(Frozen):
    """A half-open interval [gte, lt) on one timestamp column; either end may be open."""

    gte: UtcDatetime | None = None
    lt: UtcDatetime | None = None

    @model_validator(mode="after")
    def _ordered(self) -> TimeRange:
        if self.gte is not None and self.lt is not None and self.gte >= self.lt:
            raise ValueError("gte must be earlier than lt")
        return self


class Filters(Frozen):
    """Conditions every returned memory must meet, applied inside the store query.

    ``status`` defaults to active memories only. ``metadata`` is equality on top-level keys.
    """

    kind: tuple[str, ...] | None = None
    exclude_kind: tuple[str, ...] = ()
    status: tuple[MemoryStatus, ...] = (MemoryStatus.ACTIVE,)
    key_prefix: str | None = None
    has_key: bool = False  # only memories stored under a namespaced key
    metadata: dict[str, MetadataValue] = Field(default_factory=dict)
    created_at: TimeRange | None = None
    updated_at: TimeRange | None = None
    event_time: TimeRange | None = None
    valid_at: UtcDatetime | None = None  # valid time: versions true in the world at this instant (as_of)
    known_at: UtcDatetime | None = None  # record time: versions the store held as current at this instant

    @field_validator("kind", "exclude_kind", "status", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    @field_validator("kind", "exclude_kind")
    @classmethod
    def _kinds_are_identifiers(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for kind in value or ():
            validate_kind(kind)
        return value

    @field_validator("key_prefix")
    @classmethod
    def _keys_are_lower_case(cls, value: str | None) -> str | None:
        return None if value is None else value.lower()  # keys are stored in lower case (write.ingest.check_key)

    @field_validator("metadata")
    @classmethod
    def _metadata_keys(cls, value: dict[str, MetadataValue]) -> dict[str, MetadataValue]:
        for name, wanted in value.items():
            if not _IDENTIFIER.match(name):
                raise ValueError(f"metadata filter key {name!r} must be a plain identifier")
            if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted not in INT64:
                raise ValueError(f"metadata filter {name}: {wanted} does not fit in 64 bits, so no memory holds it")
        return value

    def needs_row_filter(self) -> bool:
        """True when the filter uses columns beyond scope, status and kind."""
        return bool(
            self.key_prefix
            or self.has_key
            or self.metadata
            or self.created_at
            or self.updated_at
            or self.event_time
            or self.valid_at
            or self.known_at
        )


def validate_kind(kind: str) -> str:
    if not _IDENTIFIER.match(kind) or kind != kind.lower():
        raise ValueError(f"kind {kind!r} must be a lowercase identifier such as 'fact' or 'preference'")
    return kind


def looks_like_key(text: str) -> bool:
    """A namespaced key looks like ``project:category:entity``: no spaces, two to eight parts."""
    return bool(KEY_PATTERN.match(text)) and "://" not in text


_KEY_QUOTES = lazy_pattern(r"[\s「」『』【】《》()（）\"“”`,，、;；]+")


def named_key_forms(text: str, most: int = 3) -> list[list[str]]:
    """For each namespaced key a question names among its words ("what is project:db:engine now?"), at most
    ``most`` words: the forms to look up, best first. A word glued to Chinese around it also names its shorter
    forms (:func:`_unglued`), and a key typed in other case its lower-case form (APP:DB:ENGINE)."""
    # a key in quotes, backticks or brackets, in a list, or with full-width colons as Chinese input methods type
    words = _KEY_QUOTES.split(text.replace("：", ":"))
    found = [word.strip("?？.。!！:'‘’") for word in words]
    keys = list(dict.fromkeys(word for word in found if looks_like_key(word)))[:most]
    groups = []
    for key in keys:
        forms = [key, *_unglued(key)]
        groups.append(list(dict.fromkeys([*forms, *(form.lower() for form in forms)])))
    return groups


def keys_named_in(text: str, most: int = 3) -> list[str]:
    """Every form of every key a question names (:func:`named_key_forms`), best first."""
    return list(dict.fromkeys(form for forms in named_key_forms(text, most) for form in forms))


_HAN_WORDS = HAN_RUN


def _unglued(word: str) -> list[str]:
    """Chinese has no spaces, so a key is often written glued to the question ("项目:数据库:引擎是什么",
    "请问项目:数据库:引擎"): the key with whole Chinese words cut from the end of its last part and the start of
    its first, longest first (cut where jieba cuts, so 引擎 stays whole)."""
    parts = word.split(":")
    heads = _cuts(parts[0], leading=True)
    tails = _cuts(parts[-1], leading=False)
    middle = ":".join(parts[1:-1])
    forms = [f"{head}:{middle}:{tail}" if middle else f"{head}:{tail}" for head in heads for tail in tails]
    return sorted((form for form in forms if form != word), key=len, reverse=True)


def _cuts(part: str, *, leading: bool) -> list[str]:
    """``part``, then what is left of it after cutting whole words off the Chinese run at its start
    (``leading``) or its end, one more word each time; a part of Chinese alone keeps one word."""
    import rjieba  # jieba's dictionary loads on the first glued key only

    runs = [m for m in _HAN_WORDS.finditer(part) if (m.start() == 0 if leading else m.end() == len(part))]
    words = list(rjieba.cut(runs[0].group())) if runs else []
    whole = bool(runs) and len(runs[0].group()) == len(part)  # all Chinese: one word stays (引擎是什么 -> 引擎)
    forms = [part]
    for count in range(1, len(words) if whole else len(words) + 1):
        cut = len("".join(words[:count] if leading else words[-count:]))
        forms.append(part[cut:] if leading else part[: len(part) - cut])
    return forms


OrderField = Literal["created_at", "updated_at", "event_time", "last_accessed_at", "access_count"]


class ListQuery(Frozen):
    scope: Scope
    filters: Filters = Field(default_factory=Filters)
    limit: int = Field(default=100, ge=1, le=10_000)
    offset: int = Field(default=0, ge=0)
    order_by: OrderField = "created_at"
    descending: bool = True


class SearchQuery(Frozen):
    scope: Scope
    text: str
    limit: int = Field(default=10, ge=1, le=1000)
    filters: Filters = Field(default_factory=Filters)
    # Minimum calibrated relevance (hit.breakdown.relevance, in [0, 1]) for this call; None uses
    # search.min_relevance. 0 returns every candidate the retrievers found.
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    record_access: bool = True
    now: UtcDatetime  # the facade's clock: lifecycle scoring and relative time in the query use it
    lifecycle: bool = True  # rank with decay, recency, reinforcement and confidence
    understand_time: bool = True  # "last week" / "上个月" in the query becomes a time range
    graph: bool = True  # add the graph list: memories reached through entities the query names
