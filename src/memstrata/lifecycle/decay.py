"""Lifecycle-aware ranking: relevance adjusted by age, recency of access, reinforcement and confidence.

- age decay: 0.5 ** (age / half-life of the kind): a preference lasts years, a task state days.
- recency: 1 / (1 + (days unaccessed / h) ** p), with h and p chosen so recency is 0.5 after 30 days
  and 0.2 after 90 — a smooth curve, never a cliff.
- reinforcement: 1 + r * ln(1 + access count), capped: recalled often = stronger, like a synapse.
- confidence: as recorded.
The product, capped at 1, is a strength in [0, 1] (reinforcement only makes up for age and idleness:
a fresh memory is at full strength already); the score is relevance times
``1 - weight * (1 - strength)``. So lifecycle can take at most ``weight`` of a hit's score:
a hit whose relevance is more than 1 / (1 - weight) times another's always stays above it, however
often the other was used or however long this one lay idle. All functions take ``now`` explicitly
(the facade's clock).
"""

from __future__ import annotations

import math
from datetime import datetime

from memstrata.config import LifecycleSettings
from memstrata.types import LifecycleFactors, MemoryItem, MemoryKind

_DAY = 86_400.0


def _days(later: datetime, earlier: datetime) -> float:
    return max(0.0, (later - earlier).total_seconds() / _DAY)


def age_decay(age_days: float, half_life_days: float) -> float:
    return float(0.5 ** (age_days / half_life_days))


def recency(idle_days: float, settings: LifecycleSettings) -> float:
    half = settings.recency_half_days
    # Solve 1 / (1 + (90/half) ** p) = recency_at_90_days for p, so both anchors hold exactly.
    power = math.log(1 / settings.recency_at_90_days - 1) / math.log(90 / half)
    return float(1.0 / (1.0 + (idle_days / half) ** power))


def reinforcement(access_count: int, settings: LifecycleSettings) -> float:
    return min(settings.max_reinforcement, 1.0 + settings.reinforcement * math.log1p(max(0, access_count)))


def said_at(item: MemoryItem) -> datetime:
    """When a memory entered the user's history, which is long before it was stored when old conversations
    are imported: an episode (a raw turn) at its turn's time; a fact drawn from turns when they were said; a fact
    that names no time of its own from when it holds (``valid_from``: the time of the turn it was drawn from);
    anything else from when it was recorded (a fact's own event time is when it is true, not when it was learned:
    "born in 1990")."""
    if item.kind == MemoryKind.EPISODE and item.event_time is not None:
        return min(item.created_at, item.event_time)
    if item.provenance.said_at is not None:
        return min(item.created_at, item.provenance.said_at)
    if item.event_time is None:
        return min(item.created_at, item.valid_from)
    return item.created_at


def lifecycle_factors(
    item: MemoryItem, now: datetime, settings: LifecycleSettings, *, ageless: bool = False
) -> LifecycleFactors:
    """``ageless``: the question names a time, so what it asks is what held then, and age says nothing of that (age
    and recency made "I drink green tea" of this month answer "What did I drink last year?" above the coffee of last
    year, whose relevance was higher); use and confidence still count."""
    said = said_at(item)
    decay = 1.0 if ageless else age_decay(_days(now, said), settings.half_life(item.kind))
    fresh = 1.0 if ageless else recency(_days(now, item.last_accessed_at or said), settings)
    boost = reinforcement(item.access_count, settings)
    confidence = min(1.0, max(0.0, item.confidence))
    return LifecycleFactors(
        decay=decay,
        recency=fresh,
        reinforcement=boost,
        confidence=confidence,
        lifecycle=decay * fresh * boost * confidence,
    )


def lifecycle_multiplier(factors: LifecycleFactors, settings: LifecycleSettings) -> float:
    """What lifecycle multiplies relevance by: in [1 - weight, 1]; 1 for a fresh or well-used memory."""
    strength = min(1.0, max(0.0, factors.lifecycle))
    return 1.0 - settings.weight * (1.0 - strength)
