"""The users' timezone: the days "yesterday" and "上周末" name, and the dates an agent reads beside a memory.

Times are stored in UTC. A day is not: for a user in Beijing, UTC's day runs from 08:00 to 08:00, so "我昨天做了什么？"
asked at 07:00 found the day before yesterday, and a turn said at 21:00 in California was shown as the next day.
``time.timezone`` names the users' zone; relative time in questions and turns is resolved in it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memstrata.patterns import lazy_pattern

_OFFSET = lazy_pattern(r"^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$", re.IGNORECASE)


@lru_cache(maxsize=64)
def zone_of(name: str) -> tzinfo:
    """An IANA zone ("Asia/Shanghai", "America/Los_Angeles"), "UTC", or a fixed offset ("+08:00", "UTC-5").
    Raises ValueError naming what is accepted."""
    text = name.strip()
    if text.upper() in ("UTC", "Z", "GMT", ""):
        return UTC
    if found := _OFFSET.match(text):
        sign, hours, minutes = found.groups()
        offset = timedelta(hours=int(hours), minutes=int(minutes or 0))
        if offset > timedelta(hours=14):
            raise ValueError(f"timezone {name!r}: an offset is at most 14 hours")
        return timezone(-offset if sign == "-" else offset)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown timezone {name!r}: use an IANA name such as 'Asia/Shanghai' or 'America/New_York', "
            "'UTC', or an offset such as '+08:00'"
        ) from None


def local(moment: datetime, zone: tzinfo) -> datetime:
    """``moment`` on the users' clock (a naive time is taken as UTC, as the store takes it)."""
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(zone)


def other_clocks(offsets: dict[timedelta, datetime], zone: tzinfo, zone_name: str) -> tuple[str, ...]:
    """A note for each UTC offset turns were dated with that is not the users' zone's at that time: their days are
    read on ``zone_name``'s clock ("今天是我生日" said at 00:30 in Beijing was shown a day early under UTC, and a new
    job started at 20:00 in California was not found for that day: a user trial imported such a history)."""
    notes = []
    for offset, moment in sorted(offsets.items()):
        if local(moment, zone).utcoffset() != offset:
            written = _offset_text(offset)
            notes.append(f"turns are dated at UTC{written}, but time.timezone is {zone_name!r}: their days ('today', "
                         "'昨天', dates asked about, context() dates) are read on that zone's clock; set "
                         f"time.timezone = '{written}' or the users' IANA zone (MEMSTRATA_TIME__TIMEZONE)")  # fmt: skip
    return tuple(notes)


def _offset_text(offset: timedelta) -> str:
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
