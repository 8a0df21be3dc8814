"""Relative time in Chinese and English, resolved against a reference time into a date range.

"yesterday" / "昨天", "three days ago" / "三天前", "last Friday" / "上周五", "last month" / "上个月",
"last March" / "去年三月", ... become a half-open range [start, end) of whole days in the reference's
timezone. Used twice: an extracted fact gets an event time from its source turn's timestamp, and a
query like "what did I do last week?" becomes a time range for retrieval.

Convention: weeks start on Monday, and "last <weekday>" means that weekday of the previous calendar
week, the same as 上周X — so "last Friday" and "上周五" always name the same day. A month or day without its year
("in October", "3月5日") is this year's unless the tense of its sentence points to the year before or after.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from memstrata.han import simplified
from memstrata.lifecycle import calendar_spans as cal
from memstrata.lifecycle.tense import arranged, sentence_tense
from memstrata.modality import clause_at, sentence_at
from memstrata.patterns import lazy_pattern

_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "few": 3,
}  # fmt: skip
_EN_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_EN_WEEKDAY_NAMES = [day.capitalize() for day in _EN_WEEKDAYS]
_CN_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_EN_MONTHS = [m.lower() for m in calendar.month_name[1:]]
_EN_MONTH = "|".join(_EN_MONTHS + [m[:3] for m in _EN_MONTHS])
# After a number, "may" and short names are dates only in capitals: "5 may be enough", "I have 2 dec..."
_DAY_FIRST_MONTH = "|".join(
    [m for m in _EN_MONTHS if m != "may"] + ["(?-i:May|Sept|" + "|".join(m[:3].title() for m in _EN_MONTHS) + ")"]
)


@dataclass(frozen=True)
class TimeSpan:
    start: datetime
    end: datetime
    expression: str
    vague: bool = False  # "recently": a stretch of time by convention (:func:`recent_span`), not one named


def cn_number(text: str) -> int:
    """一 .. 九十九 and plain digits."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (_CN_DIGITS.get(ones, 0) if ones else 0)
    return _CN_DIGITS[text]


def _en_number(text: str) -> int:
    return int(text) if text.isdigit() else _EN_NUMBERS[text]


def _days_in(m: re.Match[str], ref: datetime, month: int, first: str, last: str, year: str | None) -> tuple[
    datetime, datetime
]:  # fmt: skip
    def in_year(y: int) -> tuple[datetime, datetime]:
        return cal.days_span(y, month, cn_number(first), cn_number(last), ref)

    return in_year(int(year)) if year else _yearless(m, ref, in_year)


def _yearless(
    m: re.Match[str], ref: datetime, span_in: Callable[[int], tuple[datetime, datetime]]
) -> tuple[datetime, datetime]:
    """A month or day named without its year ("in March", "3月5日"): this year's, unless the tense of its sentence puts
    it in another. "I went to Japan in October" said in January 2026 is October 2025, not a trip nine months
    ahead; "I'll visit Kyoto in March" said in November is next March. A sentence with no tense cue, or with both,
    keeps this year's."""
    span = span_in(ref.year)
    tense = _tense_at(m.string, m.start())
    if tense < 0 and span[0] > ref:
        return span_in(ref.year - 1)
    if tense > 0 and span[1] <= ref:
        return span_in(ref.year + 1)
    return span


def _tense_at(text: str, position: int) -> int:
    """The tense of the clause naming a time, else of its sentence; a start in a clause with no tense of its own is to
    come: "拿到了 Shopee 新加坡的 offer, senior backend, 十月入职" said in September starts this October, though the
    offer came (了) already; it was placed a year back, before the job it followed (a user trial)."""
    clause = clause_at(text, position)
    tense = sentence_tense(clause)
    if tense:
        return tense
    return 1 if _A_START.search(clause) else sentence_tense(sentence_at(text, position))


# Starting a job, a school year or a post: "十月入职", "starting in October"
_A_START = lazy_pattern(r"入职|上任|开学|报到|上岗|\bstart(?:s|ing)\b|\bbegin(?:s|ning)\b", re.IGNORECASE)


# Seasons as the months that start them (meteorological, northern hemisphere); winter runs into the next year.
_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12, "春": 3, "夏": 6, "秋": 9, "冬": 12}
_EN_SEASON = "spring|summer|fall|autumn|winter"
_CN_YEAR = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}


_RELATIVE_WORD = {"last": -1, "previous": -1, "this": 0, "next": 1, "上": -1, "这": 0, "本": 0, "下": 1, "": 0}

Handler = Callable[[re.Match[str], datetime], tuple[datetime, datetime]]

_RULES: list[tuple[re.Pattern[str], Handler]] = [
    (  # days of one month in Chinese: "3月3日至5日", "2023年3月3日到5日" (before "2023年3月3日", one day)
        lazy_pattern(
            r"(?:(?<!\d)((?:19|20)\d\d)\s*年\s*)?([一二三四五六七八九十\d]{1,3})\s*月\s*([一二三四五六七八九十\d]{1,3})\s*[日号]?"
            r"\s*[-–—~～到至]\s*([一二三四五六七八九十\d]{1,3})\s*[日号]"
        ),
        lambda m, r: _days_in(m, r, cn_number(m[2]), m[3], m[4], m[1]),
    ),
    (  # absolute dates: "2023-05-01", "2023/5/1", "2023年5月1日"
        lazy_pattern(r"(?<!\d)(\d{4})\s*(?:[-/.]|年)\s*(\d{1,2})\s*(?:[-/.]|月)\s*(\d{1,2})(?!\d)"),
        lambda m, r: cal.day_span(r.replace(year=int(m[1]), month=int(m[2]), day=int(m[3]))),
    ),
    (
        lazy_pattern(r"(?<!\d)(\d{4})\s*年\s*([一二三四五六七八九十\d]{1,3})\s*月"),
        lambda m, r: cal.month_span(int(m[1]), cn_number(m[2]), r),
    ),
    (  # days of one month: "May 2-9, 2023", "May 2 to 9", "2-9 May" (before "May 2" and "9 May", one day)
        lazy_pattern(
            rf"\b({_EN_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|—|to|until|through|thru)\s*(\d{{1,2}})"
            rf"(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?",
            re.I,
        ),
        lambda m, r: _days_in(m, r, _month_number(m[1]), m[2], m[3], m[4]),
    ),
    (
        lazy_pattern(
            rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s*(?:-|–|—|to)\s*(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?"
            rf"({_DAY_FIRST_MONTH})\b(?:,?\s+(\d{{4}}))?",
            re.I,
        ),
        lambda m, r: _days_in(m, r, _month_number(m[3]), m[1], m[2], m[4]),
    ),
    (  # the day first: "on 1 February, 2023", "the 3rd of June", "12 Sept 2021" (before "Sept 2021", a month)
        lazy_pattern(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_DAY_FIRST_MONTH})\b(?:,?\s+(\d{{4}}))?", re.I),
        lambda m, r: (
            cal.day_span(r.replace(year=int(m[3]), month=_month_number(m[2]), day=int(m[1])))
            if m[3]
            else _yearless(
                m, r, lambda year: cal.day_span(r.replace(year=year, month=_month_number(m[2]), day=int(m[1])))
            )
        ),
    ),
    (
        lazy_pattern(rf"\b({_EN_MONTH})\s+(\d{{4}})\b", re.I),
        lambda m, r: cal.month_span(int(m[2]), _month_number(m[1]), r),
    ),
    (lazy_pattern(r"大前天"), lambda m, r: cal.day_span(r, -3)),
    (lazy_pattern(r"前天|the day before yesterday", re.I), lambda m, r: cal.day_span(r, -2)),
    (lazy_pattern(r"后天|the day after tomorrow", re.I), lambda m, r: cal.day_span(r, 2)),
    (lazy_pattern(r"昨天|昨日|昨晚|\byesterday\b|\blast night\b", re.I), lambda m, r: cal.day_span(r, -1)),
    (lazy_pattern(r"今天|今日|今晚|\btoday\b|\btonight\b", re.I), lambda m, r: cal.day_span(r)),
    (lazy_pattern(r"明天|明日|\btomorrow\b", re.I), lambda m, r: cal.day_span(r, 1)),
    (
        lazy_pattern(r"([一二两三四五六七八九十\d]+)\s*(天|个星期|星期|周|个月|年)(?:以)?前"),
        lambda m, r: cal.ago(r, cn_number(m[1]), m[2]),
    ),
    (
        lazy_pattern(
            r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|couple of|few)\s+"
            r"(day|week|month|year)s?\s+ago\b",
            re.I,
        ),
        lambda m, r: cal.ago(r, _en_number(m[1].lower()), m[2].lower()),
    ),
    (  # "每周一" is a habit; a bare "周一" is placed by its sentence's tense, else this week's (_cn_weekday)
        lazy_pattern(r"(每)?(上|这|本|下)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])"),
        lambda m, r: _cn_weekday(m, r),
    ),
    (
        lazy_pattern(rf"\b(last|previous|this|next)\s+({'|'.join(_EN_WEEKDAYS)})\b", re.I),
        lambda m, r: cal.weekday_span(r, _RELATIVE_WORD[m[1].lower()], _EN_WEEKDAYS.index(m[2].lower())),
    ),
    (  # "on Saturday", "for Saturday", "Saturday night", "a meeting Monday" alone: placed by its sentence's tense,
        # like "the weekend"; "on Saturdays" is a habit, "Black Friday" a name
        lazy_pattern(
            rf"\b(?:on|for)\s+({'|'.join(_EN_WEEKDAYS)})\b"
            rf"|\b({'|'.join(_EN_WEEKDAYS)})\s+(?:morning|afternoon|evening|night)\b"
            rf"|(?<!Cyber )(?<!Black )(?<!Good )(?<!Super )(?<!Ash )\b(?-i:({'|'.join(_EN_WEEKDAY_NAMES)}))\b",
            re.I,
        ),
        lambda m, r: cal.bare_weekday(
            r, _EN_WEEKDAYS.index((m[1] or m[2] or m[3]).lower()), arranged(sentence_at(m.string, m.start()))
        ),
    ),
    # A weekend before its week: "上周末" read as "上周" left "末" in the question and searched all of last week.
    (lazy_pattern(r"(上|这|本|下)(?:个)?(?:周末|礼拜天?末)"), lambda m, r: cal.weekend_span(r, _RELATIVE_WORD[m[1]])),
    (
        lazy_pattern(r"\b(last|previous|this|next)\s+weekend\b", re.I),
        lambda m, r: cal.weekend_span(r, _RELATIVE_WORD[m[1].lower()]),
    ),
    # "the weekend" alone is a habit ("I hike on the weekend") unless its sentence's tense places it (_the_weekend)
    (
        lazy_pattern(r"\bthe\s+weekend\b", re.I),
        lambda m, r: cal.the_weekend(r, arranged(sentence_at(m.string, m.start()))),
    ),
    (lazy_pattern(r"(上|这|本|下)(?:个)?(?:周|星期|礼拜)"), lambda m, r: cal.week_span(r, _RELATIVE_WORD[m[1]])),
    (
        lazy_pattern(r"\b(last|previous|this|next)\s+week\b", re.I),
        lambda m, r: cal.week_span(r, _RELATIVE_WORD[m[1].lower()]),
    ),
    (  # seasons named with their year: "去年夏天", "2025年夏天", "summer 2025", "the summer of last year"
        lazy_pattern(r"(前年|去年|今年|明年)\s*的?([春夏秋冬])(?:天|季)"),
        lambda m, r: cal.season_span(r.year + _CN_YEAR[m[1]], _SEASONS[m[2]], r),
    ),
    (
        lazy_pattern(r"(?<!\d)((?:19|20)\d\d)\s*年\s*的?([春夏秋冬])(?:天|季)"),
        lambda m, r: cal.season_span(int(m[1]), _SEASONS[m[2]], r),
    ),
    (
        lazy_pattern(rf"\b({_EN_SEASON})\s+(?:of\s+)?((?:19|20)\d\d)\b", re.I),
        lambda m, r: cal.season_span(int(m[2]), _SEASONS[m[1].lower()], r),
    ),
    (
        lazy_pattern(rf"\b({_EN_SEASON})\s+(?:of\s+)?(last|this|next)\s+year\b", re.I),
        lambda m, r: cal.season_span(r.year + _RELATIVE_WORD[m[2].lower()], _SEASONS[m[1].lower()], r),
    ),
    (  # "last summer", "这个夏天", "上个冬天": the latest one over, the one under way, the next one
        lazy_pattern(rf"\b(last|this|next)\s+({_EN_SEASON})\b", re.I),
        lambda m, r: cal.named_season(r, _SEASONS[m[2].lower()], _RELATIVE_WORD[m[1].lower()]),
    ),
    (
        lazy_pattern(r"(上|这|下)个?([春夏秋冬])(?:天|季)"),
        lambda m, r: cal.named_season(r, _SEASONS[m[2]], _RELATIVE_WORD[m[1]]),
    ),
    (  # a day of a month named by its year or by the month itself: "去年3月5日", "下个月3号" (before the month alone:
        # "下个月3号要去复查" was dated the 1st, a user trial)
        lazy_pattern(
            r"(去年|今年|明年|前年)\s*([一二三四五六七八九十\d]{1,3})\s*月\s*([一二三四五六七八九十\d]{1,3})\s*[日号]"
        ),
        lambda m, r: _day_of(cal.month_span(r.year + _CN_YEAR[m[1]], cn_number(m[2]), r), cn_number(m[3])),
    ),
    (
        lazy_pattern(r"(上|这|本|下)个?月\s*的?\s*([一二三四五六七八九十\d]{1,3})\s*[日号]"),
        lambda m, r: _day_of(cal.month_span(r.year, r.month + _RELATIVE_WORD[m[1]], r), cn_number(m[2])),
    ),
    (  # "the 3rd of next month"
        lazy_pattern(r"\bthe\s+(\d{1,2})(?:st|nd|rd|th)\s+of\s+(last|this|next)\s+month\b", re.I),
        lambda m, r: _day_of(cal.month_span(r.year, r.month + _RELATIVE_WORD[m[2].lower()], r), int(m[1])),
    ),
    (  # "next month on the 3rd"
        lazy_pattern(r"\b(last|this|next)\s+month\s+on\s+the\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.I),
        lambda m, r: _day_of(cal.month_span(r.year, r.month + _RELATIVE_WORD[m[1].lower()], r), int(m[2])),
    ),
    (
        lazy_pattern(r"(去年|今年|明年|前年)\s*([一二三四五六七八九十\d]{1,3})\s*月"),
        lambda m, r: cal.month_span(r.year + _CN_YEAR[m[1]], cn_number(m[2]), r),
    ),
    (
        lazy_pattern(r"(上|这|本|下)个?月"),
        lambda m, r: cal.month_span(r.year, r.month + _RELATIVE_WORD[m[1]], r),
    ),
    (
        lazy_pattern(r"\b(last|previous|this|next)\s+month\b", re.I),
        lambda m, r: cal.month_span(r.year, r.month + _RELATIVE_WORD[m[1].lower()], r),
    ),
    (  # "March last year", "in March of next year": that year's month (before "last year" takes the year)
        lazy_pattern(rf"\b({_EN_MONTH})\s+(?:of\s+)?(last|this|next)\s+year\b", re.I),
        lambda m, r: cal.month_span(r.year + _RELATIVE_WORD[m[2].lower()], _month_number(m[1]), r),
    ),
    (  # "last March": the latest March before this month; "next March": the first after it
        lazy_pattern(rf"\b(last|this|next)\s+({_EN_MONTH})\b", re.I),
        lambda m, r: cal.named_month(r, _month_number(m[2]), _RELATIVE_WORD[m[1].lower()]),
    ),
    (
        lazy_pattern(r"(前年|去年|今年|明年)"),
        lambda m, r: cal.year_span(r.year + _CN_YEAR[m[1]], r),
    ),
    (
        lazy_pattern(r"\b(last|this|next)\s+year\b", re.I),
        lambda m, r: cal.year_span(r.year + _RELATIVE_WORD[m[1].lower()], r),
    ),
    (  # a year alone: "2024年" (not "2024年3月", matched above), "in 2024", "during 2025"
        lazy_pattern(r"(?<!\d)((?:19|20)\d\d)\s*年(?!\s*[一二三四五六七八九十\d])"),
        lambda m, r: cal.year_span(int(m[1]), r),
    ),
    (
        lazy_pattern(r"\b(?:in|during|throughout|of)\s+(?:the\s+year\s+)?((?:19|20)\d\d)\b(?![-/.:]\d)", re.I),
        lambda m, r: cal.year_span(int(m[1]), r),
    ),
    (
        lazy_pattern(r"([一二三四五六七八九十\d]{1,3})\s*月\s*([一二三四五六七八九十\d]{1,3})\s*[日号]"),
        lambda m, r: _yearless(
            m, r, lambda year: cal.day_span(r.replace(year=year, month=cn_number(m[1]), day=cn_number(m[2])))
        ),
    ),
    (
        lazy_pattern(rf"\b({_EN_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I),
        lambda m, r: (
            cal.day_span(r.replace(year=int(m[3]), month=_month_number(m[1]), day=int(m[2])))
            if m[3]
            else _yearless(
                m, r, lambda year: cal.day_span(r.replace(year=year, month=_month_number(m[1]), day=int(m[2])))
            )
        ),
    ),
    (
        lazy_pattern(r"([一二三四五六七八九十\d]{1,3})\s*月份?"),
        lambda m, r: _yearless(m, r, lambda year: cal.month_span(year, cn_number(m[1]), r)),
    ),
    (
        lazy_pattern(rf"\bin\s+({_EN_MONTH})\b", re.I),
        lambda m, r: _yearless(m, r, lambda year: cal.month_span(year, _month_number(m[1]), r)),
    ),
]


def _day_of(month: tuple[datetime, datetime], day: int) -> tuple[datetime, datetime]:
    """The ``day`` of the month ``month`` spans; ValueError for a day it does not have ("下个月31号" in February)."""
    return cal.day_span(month[0].replace(day=day))


def _month_number(name: str) -> int:
    name = name.lower()
    return next(i for i, month in enumerate(_EN_MONTHS, start=1) if month.startswith(name[:3]))


def _readings(text: str, reference: datetime) -> Iterator[tuple[re.Match[str], TimeSpan]]:
    """Every period any rule reads in ``text``, rule by rule, with where it was read."""
    for pattern, handler in _RULES:
        for match in pattern.finditer(text):
            try:
                start, end = handler(match, reference)
            except (ValueError, KeyError, StopIteration, OverflowError):
                continue
            yield match, TimeSpan(start, end, match.group())


def _cn_weekday(m: re.Match[str], ref: datetime) -> tuple[datetime, datetime]:
    """上周五 / 这周五 / 下周五 as said; "每周五" names no day (ValueError: the rule is passed over); a bare "周五" the
    one to come or the one gone where its sentence says so ("周五要去看牙", "周五去看了牙"), else this week's."""
    every, relative, weekday = m[1], m[2], _CN_WEEKDAYS[m[3]]
    if every:
        raise ValueError("every week: a habit")
    if relative:
        return cal.weekday_span(ref, _RELATIVE_WORD[relative], weekday)
    tense = arranged(sentence_at(m.string, m.start()))
    return cal.bare_weekday(ref, weekday, tense) if tense else cal.weekday_span(ref, 0, weekday)


def find_time_spans(text: str, reference: datetime) -> list[TimeSpan]:
    """Every period any rule reads in ``text`` (overlapping readings included: "去年三月" is also "去年"), Traditional
    text read as Simplified."""
    return [span for _, span in _readings(simplified(text), reference)]


def overlaps(a: TimeSpan, b: TimeSpan) -> bool:
    return a.start < b.end and b.start < a.end


def find_time_span(text: str, reference: datetime) -> TimeSpan | None:
    """The first time expression in ``text``, resolved against ``reference``; None if there is none. Two joined as a
    range ("between August 11 and August 15 2023", "from May 2 to May 9, 2023", "从3月3日到3月5日") are one span,
    from the first one's start to the second one's end. Traditional text is read as Simplified: "下個月要搬到台中了"
    named no month, so the move never came due (a user trial)."""
    text = simplified(text)
    for pattern, handler in _RULES:
        match = pattern.search(text)
        if match is None:
            continue
        try:
            start, end = handler(match, reference)
        except (ValueError, KeyError, StopIteration, OverflowError):
            continue  # "2月30日", or a day after 9999-12-31: not a date, keep looking
        # Every rule is read again only for a text that names a time and may join two ("to" is in most sentences).
        ranged = _range(text, reference) if _RANGE_HINT.search(text) else None
        return ranged or TimeSpan(start, end, match.group())
    return None


RECENT_DAYS = 30  # what "recently" / "最近" covers in a question: the last month, today included
_RECENT = lazy_pattern(
    r"\b(?:recently|lately|these\s+days|of\s+late)\b|最近|近来|近期|这阵子|这段时间|这些天|这几天", re.IGNORECASE
)


def recent_span(text: str, reference: datetime, days: int = RECENT_DAYS) -> TimeSpan | None:
    """ "What have I been doing recently?" / "我最近在忙什么？": the last ``days`` days up to the reference day, or
    None. For questions only: in a statement "最近" is the time it was said, which its timestamp already gives."""
    found = _RECENT.search(text)
    if found is None:
        return None
    return TimeSpan(cal.day_span(reference, 1 - days)[0], cal.day_span(reference)[1], found.group(), vague=True)


_RANGE_HINT = lazy_pattern(r"\b(?:between|to|until|till|through|thru)\b|[到至~～–—]|\s-\s", re.I)
# What joins the two ends of a range; "and" only after "between" ("in May and in June" names two times, not one).
_RANGE_JOIN = lazy_pattern(r"\s*(?:(and)|to|until|till|through|thru|[-–—~～到至])\s*", re.I)
_YEAR = lazy_pattern(r"(?<!\d)\d{4}(?!\d)|[前去今明]年")


def _range(text: str, reference: datetime) -> TimeSpan | None:
    """Two time expressions joined as a range, the end's year lent to a start that names none ("August 11 and
    August 15 2023") and the other way round."""
    longest: dict[int, tuple[int, TimeSpan]] = {}  # where an expression starts -> the longest one starting there
    for match, span in _readings(text, reference):
        if match.end() > longest.get(match.start(), (-1, None))[0]:
            longest[match.start()] = (match.end(), span)
    for first_at, (first_end, first) in sorted(longest.items()):
        join = _RANGE_JOIN.match(text, first_end)
        if join is None or join.end() not in longest or join.end() == first_end:
            continue
        if join[1] and not text[:first_at].rstrip().lower().endswith("between"):
            continue
        last_end, last = longest[join.end()]
        first, last = _share_year(first, last)
        if last.end > first.start:
            return TimeSpan(first.start, max(first.end, last.end), text[first_at:last_end])
    return None


def _share_year(first: TimeSpan, last: TimeSpan) -> tuple[TimeSpan, TimeSpan]:
    """The year one end of a range names, given to the other end where it names none."""
    if _YEAR.search(last.expression) and not _YEAR.search(first.expression):
        moved = _in_year(first, last.start.year)
        return (_in_year(first, last.start.year - 1) if moved.start > last.start else moved), last
    if _YEAR.search(first.expression) and not _YEAR.search(last.expression):
        moved = _in_year(last, first.start.year)
        return first, (_in_year(last, first.start.year + 1) if moved.start < first.start else moved)
    return first, last


def _in_year(span: TimeSpan, year: int) -> TimeSpan:
    try:
        start = span.start.replace(year=year)
    except ValueError:  # 29 February in a year that has none
        return span
    return TimeSpan(start, start + (span.end - span.start), span.expression)
