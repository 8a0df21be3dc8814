"""A question that asks when something is ("When do I go swimming?", "我什么时候去游泳？") asks for a time.

A user trial: "用户最近开始学游泳" answered "When do I go swimming?" above the turn and the fact that say "每周二和周四
晚上去": all three match the activity, only those two say when. A hit that states a time (a weekday, a date, a clock
time, a habit's "every …" / "每…", a day to come) answers before one that does not, where the two are within reach.
A question about when something happened ("When did I start?", "…的？") is left alone: "recently", "last week" and
the turn's own date answer it, which this list of times does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.patterns import lazy_pattern
from memstrata.read.move_up import move_up, within_reach
from memstrata.read.own_first import MARGIN
from memstrata.types import SearchHit

_ASKS_WHEN = lazy_pattern(
    r"^\s*when\b|\bwhat\s+(?:time|day)\b|\bwhich\s+days?\b|\bhow\s+often\b"
    r"|什么时候|什麼時候|几点|幾點|哪天|哪一天|星期几|周几|礼拜几|多久一次",
    re.IGNORECASE,
)
# 过 after a verb says it happened ("我什么时候去过日本？"); 过 before a day to keep is the verb ("我什么时候过生日？")
_ASKS_THE_PAST = lazy_pattern(
    r"\b(?:did|was|were|had)\b|了|[过過](?!生日|年|节|節)|曾经|上次|的\s*[？?]?\s*$", re.IGNORECASE
)
# whole names: "sat", "wed" and "sun" are words of their own ("I sat by the pool")
_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_STATES_A_TIME = lazy_pattern(
    rf"\b{_WEEKDAYS}\b|\b(?:every|each)\s+(?:other\s+)?(?:day|morning|afternoon|evening|night|week(?:end)?|month|year"
    rf"|{_WEEKDAYS})\b|\b\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{{1,2}}:\d{{2}}\b|\b(?:daily|weekly"
    rf"|monthly|tomorrow|tonight|weekends?)\b|\b(?:next|this)\s+(?:week|month|year|{_WEEKDAYS})\b"
    rf"|\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b"
    r"|(?:周|星期|礼拜|禮拜)[一二三四五六日天]|每(?:天|日|周|週|星期|个?月|個?月|年|晚|早|个?周末)"
    # a clock time, not 一点 ("a little": "吃一点东西") unless it says so (一点半, 一点钟)
    r"|(?:\d{1,2}|十[一二]?|[两兩二三四五六七八九])\s*[点點](?:半|钟|鐘|[0-9一二三四五六七八九十]+分?)?|一[点點](?:半|钟|鐘)"
    r"|\d{1,2}\s*[月/]\s*\d{1,2}\s*[日号號]?|[一二三四五六七八九十]+月[一二三四五六七八九十]+[日号號]"
    r"|明天|后天|後天|今晚|下周|下週|下个?月|下個?月|周末|週末",
    re.IGNORECASE,
)


def asks_when(query_text: str) -> bool:
    """Whether the question asks when something is, not when it happened."""
    return _ASKS_WHEN.search(query_text) is not None and _ASKS_THE_PAST.search(query_text) is None


def states_a_time(text: str) -> bool:
    return _STATES_A_TIME.search(text) is not None


def timed_first(hits: Sequence[SearchHit], query_text: str, *, margin: float = MARGIN) -> list[SearchHit]:
    """For a question asking when something is, a hit that states a time before one within ``margin`` that does
    not."""
    if not asks_when(query_text):
        return list(hits)

    def answers_instead(hit: SearchHit, above: SearchHit) -> bool:
        timed, untimed = states_a_time(hit.memory.text), not states_a_time(above.memory.text)
        return timed and untimed and within_reach(hit, above, margin)

    return move_up(hits, answers_instead, best=lambda hit: hit.score)
