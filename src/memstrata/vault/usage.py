"""Usage counts per note (seed 000's synapses: used often ranks higher, used rarely is forgotten).

A note is *used* when it is read on purpose (``show``) or written, not when it merely appears in
search results or an assembled context (retrieved is not used, DESIGN §6). The counts live on the
note's section memories (``access_count``, ``last_accessed_at``), so they follow a note through
edits and moves; a rebuilt index starts them again at zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime

from memstrata.vault.index import IndexedNote
from memstrata.vault.layout import version_of
from memstrata.vault.models import ForgetCandidate, NoteSummary

SATURATION = 50  # uses at which the ranking lift stops growing


def uses(note: IndexedNote) -> int:
    return max((item.access_count for item in note.sections), default=0)


def last_used(note: IndexedNote) -> datetime | None:
    stamps = [item.last_accessed_at for item in note.sections if item.last_accessed_at is not None]
    return max(stamps) if stamps else None


def lifted(score: float, count: int, weight: float) -> float:
    """The score of a note used ``count`` times: unchanged at zero, raised by at most ``weight`` of what it lacks
    of 1 (bounded, so usage only reorders near-ties, never buries a better match, and scores stay in [0, 1]; a
    multiplier gave 1.02)."""
    return score + (1.0 - score) * weight * min(1.0, math.log1p(count) / math.log1p(SATURATION))


def summary(note: IndexedNote) -> NoteSummary:
    head = note.sections[0]
    meta = head.metadata
    return NoteSummary(
        path=note.path,
        title=str(meta.get("title", "")),
        domain=str(meta.get("domain", "")),
        layer=meta.get("layer", "atomic"),
        tags=tuple(meta.get("tags") or ()),
        category=meta.get("category"),
        concepts=tuple(meta.get("concepts") or ()),
        version=version_of(note.checksum),
        uses=uses(note),
        last_used=last_used(note),
        updated_at=max(item.updated_at for item in note.sections),
    )


def matches(
    meta: dict[str, object], *, category: str | None, concept: str | None, tag: str | None, layer: str | None
) -> bool:
    """Taxonomy filters on a section's metadata: category, concept and tag compare case-insensitively."""

    def has(values: object, wanted: str | None) -> bool:
        if wanted is None:
            return True
        listed = values if isinstance(values, list) else [values]
        return wanted.casefold() in {str(v).casefold() for v in listed if v is not None}

    return (
        has(meta.get("category"), category)
        and has(meta.get("concepts"), concept)
        and has(meta.get("tags"), tag)
        and (layer is None or meta.get("layer") == layer)
    )


def forgetting_report(
    notes: Iterable[IndexedNote], now: datetime, *, min_idle_days: float, limit: int
) -> list[ForgetCandidate]:
    """Atomic notes least used and idle longest: candidates a person may confirm forgetting. The layer files
    (basic, cognition, alignment) are the domain's structure and are never proposed."""
    candidates: list[ForgetCandidate] = []
    for note in notes:
        head = note.sections[0].metadata
        if head.get("layer") != "atomic":
            continue
        touched = last_used(note) or max(item.updated_at for item in note.sections)
        idle = (now - touched).total_seconds() / 86_400
        if idle >= min_idle_days:
            candidates.append(
                ForgetCandidate(path=note.path, title=str(head.get("title", "")), uses=uses(note),
                                idle_days=round(idle, 1), version=version_of(note.checksum))
            )  # fmt: skip
    candidates.sort(key=lambda c: (c.uses, -c.idle_days, c.path))
    return candidates[:limit]
