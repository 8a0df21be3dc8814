"""The date an agent reads beside a memory, no more precise than what was said.

A fact dated by the time its words name keeps only the start of that period as its ``event_time``:
"用户孙女朵朵今年上小学一年级了", said in June 2025, holds 2025-01-01, and a context line "2025-01-01 用户孙女朵朵今年…"
told the agent a day nobody named (a user trial). The period is read again from the memory's words against the
moment they were said (``provenance.said_at``, in the users' time zone, as the write path read it), and shown at its
own precision: a day, a month ("2026-03"), a year ("2025"), or its first and last day ("2026-05-11..2026-05-17" for
"last week").
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from memstrata.lifecycle.timeparse import find_time_spans
from memstrata.timezones import local
from memstrata.types import MemoryItem

# Time zones lie at most 26 hours apart (UTC-12 to UTC+14): of the periods read in today's zone, the one starting
# nearest the event time is the one the write path dated it by, if time.timezone changed since.
_ZONES_APART = timedelta(hours=26)


def shown_date(item: MemoryItem, zone: tzinfo) -> str:
    """Its event's period where its words name the one it is dated by, else the day it holds from."""
    said = item.provenance.said_at
    if item.event_time is not None and said is not None:
        event = item.event_time
        periods = [
            span for span in find_time_spans(item.text, local(said, zone)) if abs(span.start - event) <= _ZONES_APART
        ]
        period = min(periods, key=lambda span: abs(span.start - event), default=None)
        if period is not None:
            return _at_its_precision(local(period.start, zone), local(period.end, zone))
    return local(item.event_time or item.valid_from, zone).date().isoformat()


def _at_its_precision(start: datetime, end: datetime) -> str:
    last = (end - timedelta(days=1)).date()
    if last <= start.date():
        return start.date().isoformat()
    if start.day == 1 and end.day == 1:
        months = (end.year - start.year) * 12 + end.month - start.month
        if months == 12 and start.month == 1:
            return str(start.year)
        if months == 1:
            return f"{start.year:04d}-{start.month:02d}"
    return f"{start.date().isoformat()}..{last.isoformat()}"
