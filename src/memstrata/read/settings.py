"""What the read path needs from Settings, in one frozen object (see SearchSettings for each field)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, tzinfo
from typing import Literal

from memstrata.config import GraphSettings, LifecycleSettings, SearchSettings, Settings
from memstrata.read.fuse import EvidenceWeights

_SEARCH = SearchSettings()  # the defaults live in config.py only


@dataclass(frozen=True)
class ReadSettings:
    candidates: int = _SEARCH.candidates
    rrf_k: int = _SEARCH.rrf_k
    keyword_weight: float = _SEARCH.keyword_weight
    dense_weight: float = _SEARCH.dense_weight
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    fusion: Literal["score", "rrf"] = _SEARCH.fusion
    graph_evidence: float = _SEARCH.graph_evidence
    dense_floor: float = _SEARCH.dense_floor
    dense_alone_floor: float = _SEARCH.dense_alone_floor
    dense_ceiling: float = _SEARCH.dense_ceiling
    min_relevance: float = _SEARCH.min_relevance
    conversation_cutoff: float = _SEARCH.conversation_cutoff
    context_weight: float = _SEARCH.context_weight
    reply_context_weight: float = _SEARCH.reply_context_weight
    correct_spelling: bool = _SEARCH.correct_spelling
    translate_words: bool = _SEARCH.translate_words
    timezone: tzinfo = UTC  # the users' zone: the days relative time in a question names (config: time.timezone)

    @classmethod
    def from_settings(cls, settings: Settings) -> ReadSettings:
        search = settings.search
        return cls(
            candidates=search.candidates,
            rrf_k=search.rrf_k,
            keyword_weight=search.keyword_weight,
            dense_weight=search.dense_weight,
            lifecycle=settings.lifecycle,
            graph=settings.graph,
            fusion=search.fusion,
            graph_evidence=search.graph_evidence,
            dense_floor=search.dense_floor,
            dense_alone_floor=search.dense_alone_floor,
            dense_ceiling=search.dense_ceiling,
            min_relevance=search.min_relevance,
            conversation_cutoff=search.conversation_cutoff,
            context_weight=search.context_weight,
            reply_context_weight=search.reply_context_weight,
            correct_spelling=search.correct_spelling,
            translate_words=search.translate_words,
            timezone=settings.time.zone(),
        )

    def evidence_weights(self) -> EvidenceWeights:
        return EvidenceWeights(keyword=self.keyword_weight, dense=self.dense_weight, graph=self.graph_evidence)
