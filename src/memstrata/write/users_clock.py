"""Turns read on the users' clock (time.timezone) by the extractor, and what it found back in UTC.

"昨天去了医院" said at 07:00 in Beijing is 23:00 UTC the day before: resolved on UTC's clock, "yesterday" was the
day before that. The extractor resolves relative time against each turn's timestamp (write/facts.py), so it is
handed the turns in the users' zone; the times it returns are brought back to UTC, as the store keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, tzinfo

from memstrata.timezones import local
from memstrata.types import Message
from memstrata.write.decisions import Extraction


def on_the_users_clock(turns: Sequence[Message], zone: tzinfo) -> list[Message]:
    if zone is UTC:
        return list(turns)
    return [turn.model_copy(update={"timestamp": local(turn.timestamp, zone)}) for turn in turns]


def in_utc(extraction: Extraction) -> Extraction:
    facts = [
        replace(fact, event_time=_utc(fact.event_time), event_end=_utc(fact.event_end), said_at=_utc(fact.said_at))
        for fact in extraction.facts
    ]
    return replace(extraction, facts=facts)


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else local(moment, UTC)
