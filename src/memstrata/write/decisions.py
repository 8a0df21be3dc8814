"""The records of the write path: extracted facts, their candidates, and the closed set of decisions.

Every extracted fact ends as exactly one decision: ADD (stored), UPDATE (stored, closing the memories it
replaces) or NONE (not stored because it repeats a named memory). A model's proposal the engine refused is
kept beside the decision as a :class:`Rejection`, so the job result and the history say what was refused
and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memstrata.graph.extracted import Triple
from memstrata.types import JsonDict, MemoryItem


@dataclass(frozen=True)
class NewFact:
    text: str
    kind: str
    confidence: float
    message_ids: tuple[str, ...]
    key: str | None = None
    event_time: datetime | None = None  # when the event happened, if the turn says (relative words resolved)
    event_end: datetime | None = None  # end of the period the words name ("last month": the 1st of this month)
    said_at: datetime | None = None  # timestamp of the earliest source turn: when the fact became known true


@dataclass(frozen=True)
class Extraction:
    """What one extractor call found: facts, and relation triples for the graph (models only; the
    pattern-based graph extractor runs in the pipeline for every extractor)."""

    facts: list[NewFact] = field(default_factory=list)
    relations: list[Triple] = field(default_factory=list)

    def __add__(self, other: Extraction) -> Extraction:
        return Extraction(self.facts + other.facts, self.relations + other.relations)


@dataclass(frozen=True)
class Candidate:
    """A stored (or earlier in this batch) memory a fact might repeat, refine or contradict."""

    item: MemoryItem
    similarity: float  # cosine of the two texts' vectors
    evidence: str | None = None  # what ties them together besides a model's say-so (write/evidence.py)
    in_batch: bool = False  # a fact of an earlier turn of the same job, not yet stored


@dataclass(frozen=True)
class Rejection:
    """A proposal the engine refused to apply, and why."""

    proposal: str  # "same" / "refines" / "contradicts" / "UPDATE" ...
    target_id: str | None
    target_text: str | None
    reason: str

    def as_json(self) -> JsonDict:
        return {"proposal": self.proposal, "target": self.target_id, "target_text": self.target_text,
                "reason": self.reason}  # fmt: skip


@dataclass(frozen=True)
class Add:
    fact: NewFact
    rejected: tuple[Rejection, ...] = ()


@dataclass(frozen=True)
class Update:
    """The fact is stored and closes ``targets`` (a change, an ending, a more specific version)."""

    fact: NewFact
    targets: tuple[MemoryItem, ...]
    relation: str  # "contradicts" or "refines": why the targets are closed
    rejected: tuple[Rejection, ...] = ()


@dataclass(frozen=True)
class Noop:
    """The fact repeats ``target``; nothing new is stored (a pending target gains confidence)."""

    fact: NewFact
    target: MemoryItem
    reason: str
    rejected: tuple[Rejection, ...] = ()


Resolved = Add | Update | Noop
