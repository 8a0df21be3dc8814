"""What an extractor hands to the graph: entity mentions and relation triples, before resolution."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mention:
    name: str
    type: str | None = None  # None: let the relation's usual types and the name's cues decide
    speaker: bool = False  # the "I" of a turn: the user, or the named speaker of a transcript


@dataclass(frozen=True)
class Triple:
    source: Mention
    relation: str  # canonical snake_case (see vocabulary.canonical_relation)
    target: Mention
    confidence: float
    message_ids: tuple[str, ...]
    ended: bool = False  # the turn says the relation is no longer true ("我不在字节工作了")
    event_time: str | None = None  # ISO date the turn gives for it, if any
    origin: str = "rules"  # "rules" or the model that extracted it

    def key(self) -> tuple[str, str, str, bool]:
        from memstrata.graph.names import normalize

        return (normalize(self.source.name), self.relation, normalize(self.target.name), self.ended)
