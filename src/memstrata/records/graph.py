"""Graph records: typed entities and relations with temporal validity, kept in the memory store.

An entity is a node of one scope (a person, an organisation, a place, a project ...). A relation is a
directed, typed edge between two entities. A relation that stops being true is closed (``valid_to``),
never deleted, so the graph keeps its own history.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, field_validator

from memstrata.patterns import lazy_pattern
from memstrata.types import Frozen, JsonDict, Scope, UtcDatetime

_LABEL = lazy_pattern(r"^[a-z][a-z0-9_]{0,63}$")

ENTITY_TYPES = (
    "person",
    "organization",
    "location",
    "profession",
    "project",
    "paper",
    "concept",
    "product",
    "event",
    "thing",
)


def validate_label(value: str) -> str:
    """Entity types and relation names are lowercase snake_case identifiers (any, not only the built-in ones)."""
    if not _LABEL.match(value):
        raise ValueError(f"{value!r} must be a lowercase snake_case identifier such as 'works_at'")
    return value


class Entity(Frozen):
    id: str
    scope: Scope
    name: str = Field(min_length=1, max_length=200)
    type: str = "thing"
    aliases: tuple[str, ...] = ()  # other names of the same thing ("字节" for "字节跳动"); never the name itself
    message_ids: tuple[str, ...] = ()  # the raw turns that mention it
    metadata: JsonDict = Field(default_factory=dict)
    merged_into: str | None = None  # set when a person merged this node into another one
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @field_validator("type")
    @classmethod
    def _type_label(cls, value: str) -> str:
        return validate_label(value)

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)


class Relation(Frozen):
    id: str
    scope: Scope
    source_id: str
    relation: str
    target_id: str
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    event_time: UtcDatetime | None = None
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None  # closed when it stopped being true
    message_ids: tuple[str, ...] = ()  # provenance: the raw turns it was extracted from
    memory_ids: tuple[str, ...] = ()  # memories that state it (facts or episodes): what graph retrieval returns
    metadata: JsonDict = Field(default_factory=dict)
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @field_validator("relation")
    @classmethod
    def _relation_label(cls, value: str) -> str:
        return validate_label(value)

    @property
    def current(self) -> bool:
        return self.valid_to is None

    def valid_at(self, moment: datetime) -> bool:
        return self.valid_from <= moment and (self.valid_to is None or self.valid_to > moment)
