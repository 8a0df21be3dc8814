"""The users' timezone (time.timezone): the days relative time names and the dates context() shows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.errors import InvalidInputError
from memstrata.testing import ManualClock
from memstrata.timezones import zone_of

TRIPS = (("今天去了国家博物馆", "2026-03-02T20:00:00+08:00"), ("今天去了颐和园", "2026-03-01T20:00:00+08:00"))


@pytest.mark.parametrize(("zone", "yesterday"), [("Asia/Shanghai", "今天去了国家博物馆"), ("UTC", "今天去了颐和园")])
def test_yesterday_is_a_day_of_the_users_timezone(
    clocked_memory: Callable[..., Memory], clock: ManualClock, zone: str, yesterday: str
) -> None:
    """Asked at 07:00 in Beijing (23:00 UTC the day before), "yesterday" named UTC's day before that: the
    Summer Palace of two days ago answered and the museum of last night did not."""
    clock.now = datetime(2026, 3, 2, 23, 0, tzinfo=UTC)
    memory = clocked_memory(time={"timezone": zone})
    for text, when in TRIPS:
        memory.add([{"role": "user", "content": text, "timestamp": when}], user_id="u")
    assert memory.search("我昨天去了哪里？", user_id="u")[0].text == yesterday


def test_context_dates_are_days_of_the_users_timezone(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """A turn said at 21:00 in California was shown with the next day's date (UTC's)."""
    clock.now = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
    said = "2026-03-01T21:00:00-08:00"
    for zone, day in (("America/Los_Angeles", "2026-03-01"), ("UTC", "2026-03-02")):
        memory = clocked_memory(time={"timezone": zone})
        memory.add([{"role": "user", "content": "I adopted a cat named Mochi", "timestamp": said}], user_id=zone)
        context = memory.context("What is my cat's name?", user_id=zone, budget_tokens=400)
        assert f"] {day} " in context.text and "Mochi" in context.text, context.text


def test_a_timezone_is_a_zone_name_or_an_offset() -> None:
    assert str(zone_of("+08:00")) == "UTC+08:00" and zone_of("UTC-5").utcoffset(None).total_seconds() == -18_000
    assert zone_of("Asia/Shanghai").utcoffset(datetime(2026, 3, 2)).total_seconds() == 8 * 3600
    with pytest.raises(InvalidInputError, match=r"unknown timezone 'Beijing'.*IANA name"):
        load_settings({"time": {"timezone": "Beijing"}})


@pytest.mark.parametrize(("zone", "day_began"), [("Asia/Shanghai", datetime(2026, 3, 1, 16, tzinfo=UTC)),
                                                 ("UTC", datetime(2026, 3, 1, tzinfo=UTC))])  # fmt: skip
def test_yesterday_in_a_turn_is_a_day_of_the_users_timezone(
    clocked_memory: Callable[..., Memory], clock: ManualClock, zone: str, day_began: datetime
) -> None:
    """ "我搬到杭州了，昨天刚搬完" said at 07:00 in Beijing moved on the 2nd (Beijing), not on UTC's 1st."""
    clock.now = datetime(2026, 3, 3, 9, 0, tzinfo=UTC)
    memory = clocked_memory(time={"timezone": zone})
    said = [{"role": "user", "content": "我搬到杭州了，昨天刚搬完", "timestamp": "2026-03-03T07:00:00+08:00"}]
    memory.add(said, user_id="u", infer=True, wait=True)
    (fact,) = [item for item in memory.get_all(user_id="u") if item.kind != "episode"]
    assert fact.event_time == day_began, fact


def test_turns_dated_in_another_zone_say_which_setting_reads_their_days(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """A user trial imported a history dated -08:00 and +08:00 under the default time.timezone (UTC): "今天是我生日"
    said at 00:30 in Beijing showed the day before, and nothing said how to read it as the user's day."""
    clock.now = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
    turns = [
        {"role": "user", "content": "今天是我生日", "timestamp": "2025-06-01T00:30:00+08:00"},
        {"role": "user", "content": "I started at Stripe today!", "timestamp": "2025-03-03T20:00:00-08:00"},
    ]
    notes = clocked_memory().add(turns, user_id="u").notes
    assert len(notes) == 2 and "time.timezone = '-08:00'" in notes[0] and "time.timezone = '+08:00'" in notes[1]
    assert clocked_memory(time={"timezone": "Asia/Shanghai"}).add(turns[:1], user_id="v").notes == ()
    pacific = [{"role": "user", "content": "Summer hike", "timestamp": "2025-07-03T20:00:00-07:00"}]  # PDT
    assert clocked_memory(time={"timezone": "America/Los_Angeles"}).add(pacific, user_id="w").notes == ()
    utc = [
        {"role": "user", "content": "said in UTC", "timestamp": "2025-07-03T20:00:00Z"},
        {"role": "user", "content": "no zone", "timestamp": "2025-07-03T20:00:00"},
    ]
    assert clocked_memory().add(utc, user_id="x").notes == ()
