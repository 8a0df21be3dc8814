"""Calendar arithmetic for relative time: the half-open range [start, end) of whole days, in the reference's
timezone, that a day, week, weekend, month, season or year names (lifecycle/timeparse.py reads the words).

Weeks start on Monday. ``tense`` arguments are lifecycle/tense.py's: -1 past, 1 to come, 0 neither.
"""

from __future__ import annotations

from datetime import datetime, timedelta

Span = tuple[datetime, datetime]


def day_span(ref: datetime, offset_days: int = 0) -> Span:
    start = ref.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=offset_days)
    return start, start + timedelta(days=1)


def week_span(ref: datetime, offset_weeks: int) -> Span:
    monday, _ = day_span(ref, -ref.weekday() + 7 * offset_weeks)
    return monday, monday + timedelta(days=7)


def weekday_span(ref: datetime, offset_weeks: int, weekday: int) -> Span:
    monday, _ = week_span(ref, offset_weeks)
    return day_span(monday, weekday)


def weekend_span(ref: datetime, offset_weeks: int) -> Span:
    """Saturday and Sunday of the week ``offset_weeks`` from this one ("last weekend" on a Thursday: the one just
    past; on a Sunday: the one before today's)."""
    saturday, _ = weekday_span(ref, offset_weeks, 5)
    return saturday, saturday + timedelta(days=2)


def the_weekend(ref: datetime, tense: int) -> Span:
    """ "the weekend" by the tense of its sentence: to come ("What are my plans for the weekend?" on a Friday), the
    weekend ahead, or the one under way; past ("What did I do over the weekend?" on a Monday), the one just gone,
    or the one under way. Without a tense it is a habit, no time: ValueError (the rule is passed over)."""
    if tense == 0:
        raise ValueError("no tense: a habit")
    saturday, end = weekend_span(ref, 0)
    if tense > 0:
        return (saturday, end) if end > ref else weekend_span(ref, 1)
    return (saturday, end) if saturday <= ref else weekend_span(ref, -1)


def bare_weekday(ref: datetime, weekday: int, tense: int) -> Span:
    """ "on Saturday" by the tense of its sentence: to come ("Going to visit my parents on Saturday"), the next one
    after today; past ("I saw her on Tuesday"), the last one before today. Without a tense, no time (ValueError)."""
    if tense == 0:
        raise ValueError("no tense: a habit")
    if tense > 0:
        return day_span(ref, (weekday - ref.weekday()) % 7 or 7)
    return day_span(ref, -((ref.weekday() - weekday) % 7 or 7))


def days_span(year: int, month: int, first: int, last: int, ref: datetime) -> Span:
    """Days ``first`` to ``last`` of a month, both included ("May 2-9")."""
    if last < first:
        raise ValueError(f"day {last} before day {first}")
    start, _ = day_span(ref.replace(year=year, month=month, day=first))
    _, end = day_span(ref.replace(year=year, month=month, day=last))
    return start, end


def month_span(year: int, month: int, ref: datetime) -> Span:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    start = ref.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
    following = start.replace(year=year + month // 12, month=month % 12 + 1)
    return start, following


def year_span(year: int, ref: datetime) -> Span:
    start = ref.replace(year=year, month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    return start, start.replace(year=year + 1)


def named_month(ref: datetime, month: int, direction: int) -> Span:
    """ "last March" said in December 2026 is March 2026 (the latest one before this month), "next March" the first
    one after it, "this March" this year's."""
    if direction < 0:
        return month_span(ref.year if month < ref.month else ref.year - 1, month, ref)
    if direction > 0:
        return month_span(ref.year if month > ref.month else ref.year + 1, month, ref)
    return month_span(ref.year, month, ref)


def season_span(year: int, first_month: int, ref: datetime) -> Span:
    start, _ = month_span(year, first_month, ref)
    _, end = month_span(year, first_month + 2, ref)
    return start, end


def named_season(ref: datetime, first_month: int, direction: int) -> Span:
    """ "last summer" said in December 2026 is summer 2026 (the latest one over by now; said in July, 2025's),
    "next summer" the first one not begun yet, "this summer" the one under way or this year's."""
    year = ref.year
    if direction < 0:
        while season_span(year, first_month, ref)[1] > ref:
            year -= 1
    elif direction > 0:
        while season_span(year, first_month, ref)[0] <= ref:
            year += 1
    elif first_month == 12 and ref.month < 3:
        year -= 1  # "this winter" said in January: the one that began in December
    return season_span(year, first_month, ref)


def ago(ref: datetime, amount: int, unit: str) -> Span:
    if unit in ("day", "天"):
        return day_span(ref, -amount)
    if unit in ("week", "周", "星期", "个星期"):
        return week_span(ref, -amount)
    if unit in ("month", "个月", "月"):
        return month_span(ref.year, ref.month - amount, ref)
    return year_span(ref.year - amount, ref)
