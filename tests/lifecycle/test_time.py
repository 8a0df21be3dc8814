"""Temporal validity, time travel, event time vs record time, time in queries, working memory."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.errors import ConflictError, InvalidInputError
from memstrata.lifecycle.timeparse import find_time_span, recent_span
from memstrata.providers.openai_chat import OpenAICompatibleChat
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.query import SearchQuery
from memstrata.read.retrieve import query_time_span
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock
from memstrata.types import MemoryStatus, Scope
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler
from support.scripted_llm import Reply, ScriptedServer, completion

from .conftest import START


def _scripted(store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer, clock: ManualClock) -> Memory:
    chat = OpenAICompatibleChat(server.base_url, "scripted", timeout_s=2, max_attempts=1, transport_retries=0)
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    return Memory(store, embedder, settings=settings, clock=clock, extractor=LLMExtractor(chat),
                  reconciler=LLMReconciler(chat))  # fmt: skip


def _fact(text: str) -> Reply:
    return completion({"facts": [{"turn": 1, "text": text}]})


def _update_first_existing(request: dict[str, Any]) -> Reply:
    """The judge's answer for the one (old, new) pair it is asked about: they conflict."""
    assert request["messages"][-1]["content"].startswith("OLD: ")
    return completion({"answer": "conflict"})


def _said(memory: Memory, said: list[tuple[str, str]]) -> None:
    memory.add([{"role": "user", "content": text, "timestamp": when} for when, text in said], user_id="u1")


def _answered_first(memory: Memory, asked: dict[str, str]) -> None:
    """Each question's first hit is its answer."""
    for question, answer in asked.items():
        hits = memory.search(question, user_id="u1")
        assert hits and hits[0].text == answer, (question, [(h.text, h.score) for h in hits])


def test_last_friday_and_shang_zhou_wu_are_the_same_day() -> None:
    for day in range(7):
        reference = START + timedelta(days=day, hours=5)
        english, chinese = find_time_span("last Friday", reference), find_time_span("上周五", reference)
        assert english is not None and chinese is not None and english.start == chinese.start
        assert english.start.weekday() == 4 and english.start < reference
    three = find_time_span("三天前", START)
    assert three is not None and three.start == find_time_span("three days ago", START).start  # type: ignore[union-attr]
    march = find_time_span("去年三月", START)
    assert march is not None and (march.start.year, march.start.month) == (START.year - 1, 3)


@pytest.mark.parametrize(
    ("said", "start", "end"),
    [
        ("what did I do in 2024?", "2024-01-01", "2025-01-01"),
        ("2024年我做了什么", "2024-01-01", "2025-01-01"),
        ("2025年夏天去了哪里", "2025-06-01", "2025-09-01"),  # was all of 2025
        ("去年夏天我去了哪里？", "2025-06-01", "2025-09-01"),
        ("What did I do last summer?", "2026-06-01", "2026-09-01"),  # said in December: this year's, now over
        ("Where did I go in summer 2025?", "2025-06-01", "2025-09-01"),  # was no time at all
        ("this winter", "2026-12-01", "2027-03-01"),
        ("去年冬天", "2025-12-01", "2026-03-01"),
        ("我夏天喜欢游泳", None, None),  # a habit, not a time
        ("during 2025", "2025-01-01", "2026-01-01"),
        ("2024年3月", "2024-03-01", "2024-04-01"),
        ("March last year", "2025-03-01", "2025-04-01"),  # was all of 2025
        ("last March", "2026-03-01", "2026-04-01"),  # said in December 2026: the latest March, not 2025's
        ("next March", "2027-03-01", "2027-04-01"),
        ("I have 2024 apples", None, None),
        ("since 2019", None, None),  # from then until now, not the year 2019
        ("What did I do last weekend?", "2026-11-28", "2026-11-30"),  # said on a Wednesday: the weekend just past
        ("上周末我做了什么", "2026-11-28", "2026-11-30"),  # was all of last week, and "末" was left as a keyword
        ("这个周末去哪", "2026-12-05", "2026-12-07"),
        ("next weekend", "2026-12-12", "2026-12-14"),
        ("我周末喜欢打羽毛球", None, None),  # a habit, not a time
        ("What did Gina find on 1 February, 2023?", "2023-02-01", "2023-02-02"),  # the day first: was none
        ("on 2 Dec 2022", "2022-12-02", "2022-12-03"),  # was all of December ("Dec 2022")
        ("We met on the 3rd of June", "2026-06-03", "2026-06-04"),
        ("I think 5 may be enough", None, None),  # "may" after a number is a date in capitals only
        ("I have 2 dec of them", None, None),
        # a day of a month named relatively: was the whole month, so "下个月3号要去复查" was dated the 1st (a trial)
        ("下个月3号要去市一医院复查", "2027-01-03", "2027-01-04"),
        ("上个月的20号", "2026-11-20", "2026-11-21"),
        ("本月15日交房租", "2026-12-15", "2026-12-16"),
        ("去年3月5日", "2025-03-05", "2025-03-06"),
        ("明年一月十号", "2027-01-10", "2027-01-11"),
        ("on the 3rd of next month", "2027-01-03", "2027-01-04"),
        ("next month on the 3rd", "2027-01-03", "2027-01-04"),
        ("上个月31号", "2026-11-01", "2026-12-01"),  # November has no 31st: the month, not a day of another
    ],
)
def test_years_and_named_months(said: str, start: str | None, end: str | None) -> None:
    span = find_time_span(said, datetime(2026, 12, 2, 15, tzinfo=UTC))
    found = (span.start.date().isoformat(), span.end.date().isoformat()) if span else (None, None)
    assert found == (start, end)


@pytest.mark.parametrize(
    ("said", "start"),
    [
        ("I went to Japan in October", "2025-10-01"),  # said in January: the October just past, not nine months ahead
        ("我十月份去了日本", "2025-10-01"),
        ("我十月去过日本", "2025-10-01"),
        ("What did I do in October?", "2025-10-01"),
        ("We visited Kyoto on October 3rd", "2025-10-03"),
        ("我10月3日见了小王", "2025-10-03"),
        ("I'm going to Japan in October", "2026-10-01"),  # a plan: this year's
        ("我十月份要去日本", "2026-10-01"),
        ("我十月去日本玩", "2026-10-01"),  # no tense: this year's, as before
        ("I went there in October and will go again in May", "2026-10-01"),  # both tenses: this year's
        ("October 3rd, 2024 I met Anna", "2024-10-03"),  # a year named: that year
    ],
)
def test_a_month_without_its_year_takes_the_year_its_tense_points_to(said: str, start: str) -> None:
    span = find_time_span(said, datetime(2026, 1, 15, 10, tzinfo=UTC))
    assert span is not None and span.start.date().isoformat() == start


@pytest.mark.parametrize(
    ("said", "start"),
    [
        ("I'll visit Kyoto in March", "2027-03-01"),
        ("我三月份要去京都", "2027-03-01"),
        ("I visited Kyoto in March", "2026-03-01"),
        # a start in a clause of its own is to come, whatever came before it (a user trial: placed a year back)
        ("拿到了 Shopee 新加坡的 offer, senior backend, 十二月入职", "2026-12-01"),
        ("Got an offer from Stripe, starting in December", "2026-12-01"),
        ("我十二月入职了", "2025-12-01"),  # said as done: the last one
    ],
)
def test_a_planned_month_already_past_this_year_is_next_years(said: str, start: str) -> None:
    span = find_time_span(said, datetime(2026, 11, 15, 10, tzinfo=UTC))
    assert span is not None and span.start.date().isoformat() == start


def test_imported_turns_answer_for_the_month_they_name(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "I went to Japan in October", said in January 2026, was read as October 2026, a trip nine months ahead:
    "Where did I travel in October 2025?" could not find it, the question itself read "in October" as the coming one."""
    memory = clocked_memory()  # asked on 2 March 2026
    said = [(50, "I went to Japan in October, Kyoto was stunning"), (45, "我七月份去了成都，吃了很多火锅"),
            (200, "I'm planning a trip to Iceland next year"),
            (150, "We spent a week in Lisbon in August")]  # fmt: skip
    memory.add(
        [{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)} for days, text in said],
        user_id="u1",
    )
    asked = {"Where did I travel in October 2025?": said[0][1], "Where did I go in October?": said[0][1],
             "2025年7月我去哪玩了？": said[1][1], "我七月份去哪玩了？": said[1][1]}  # fmt: skip
    _answered_first(memory, asked)


def test_small_talk_of_a_time_does_not_answer_what_was_done_then(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "哈哈哈哈" and "好的谢谢" said last weekend gained the whole lift of a question about the time alone (0 -> 0.5)
    and answered "我上周末干嘛了？" first, tied with what the user did (found by a user trial)."""
    memory = clocked_memory()  # asked on Monday 2 March 2026: last weekend is 28 Feb - 1 Mar
    said = [(1, "哈哈哈哈"), (1, "好的谢谢"), (2, "今天去朱家角古镇逛了一圈"), (9, "在公司加班写PPT")]
    memory.add([{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days, hours=2)}
                for days, text in said], user_id="w")  # fmt: skip
    assert [hit.text for hit in memory.search("我上周末干嘛了？", user_id="w")] == ["今天去朱家角古镇逛了一圈"]


def test_a_time_the_scope_has_nothing_of_is_searched_by_its_words_too(clocked_memory: Callable[..., Memory]) -> None:
    """A history imported from 2022, asked in March 2026 "What activity did I start one year ago?": nothing was said
    in 2025, and the question was searched without its time words, so "Starting tomorrow I will go to the gym and
    start exercising" ranked above the turn that says them."""
    memory = clocked_memory()
    said = [("2022-06-01T10:00:00+00:00", "I started lifting weights one year ago, it helps a lot with stress"),
            ("2022-05-02T10:00:00+00:00", "I started pottery classes on Sundays, so much fun"),
            ("2022-04-11T10:00:00+00:00", "That's such a rewarding activity, keep going and have fun!"),
            ("2022-03-20T10:00:00+00:00", "Starting tomorrow I will go to the gym and start exercising"),
            ("2022-07-09T10:00:00+00:00", "我一年前开始学游泳，现在每周游三次")]  # fmt: skip
    _said(memory, said)
    asked = {"What activity did I start one year ago?": said[0][1], "我一年前开始了什么运动？": said[4][1]}
    _answered_first(memory, asked)


def test_a_turn_naming_a_whole_year_does_not_answer_for_one_month(clocked_memory: Callable[..., Memory]) -> None:
    """ "今年春节我要回成都老家过年" names all of 2025 (the festival's date is not read) and answered "What happened
    in April 2025?" as fully as the job change said that April."""
    memory = clocked_memory()
    said = [("2025-01-20T10:00:00+00:00", "今年春节我要回成都老家过年"),
            ("2025-04-08T10:00:00+00:00", "I switched jobs: now I'm a data engineer at Stripe"),
            ("2025-04-20T10:00:00+00:00", "我们领养了一只小猫"),
            ("2025-06-30T10:00:00+00:00", "Summer plans: Italy!")]  # fmt: skip
    memory.add([{"role": "user", "content": text, "timestamp": when} for when, text in said], user_id="u1")
    for question in ("What happened in April 2025?", "2025年4月发生了什么？"):
        found = [hit.text for hit in memory.search(question, user_id="u1")]
        assert set(found[:2]) == {said[1][1], said[2][1]} and said[0][1] not in found, (question, found)
    found = [hit.text for hit in memory.search("What did I do in 2025?", user_id="u1")]
    assert said[0][1] in found  # the year itself it still answers for


def test_a_change_in_effect_for_most_of_the_named_time_answers_for_it(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "Where did I work in December 2024?" answered "I work at ByteDance" (said in 2023) above "Just started my new
    job at Alibaba last week!" (said that November): both match on "work", the older one on more words. What held
    then is the change, once it took effect before most of the time asked about; before the change, the old state."""
    memory = clocked_memory()
    said = [("2023-05-01T10:00:00+00:00", "我住在北京朝阳区，离公司很近"),
            ("2025-03-02T10:00:00+00:00", "我去年七月搬到上海了，现在住在浦东"),
            ("2023-06-01T10:00:00+00:00", "I work at ByteDance as a backend engineer"),
            ("2024-11-20T10:00:00+00:00", "Just started my new job at Alibaba last week!")]  # fmt: skip
    _said(memory, said)
    asked = {"Where did I work in December 2024?": said[3][1], "2024年12月我在哪工作？": said[3][1],
             "Where did I live in September 2024?": said[1][1], "2024年8月我住在哪？": said[1][1],
             "Where did I work in March 2024?": said[2][1], "2024年3月我住在哪？": said[0][1]}  # fmt: skip
    _answered_first(memory, asked)


@pytest.mark.parametrize(
    ("said", "start", "end"),
    [
        # Each was its first day alone: "between August 11 and August 15 2023" asked about August 11 only.
        ("Where was John between August 11 and August 15 2023?", "2023-08-11", "2023-08-16"),
        ("What happened from May 2 to May 9, 2023?", "2023-05-02", "2023-05-10"),  # was May 2 of 2026
        ("from May 2, 2023 to May 9", "2023-05-02", "2023-05-10"),
        ("I was in Paris from December 28 to January 3, 2024", "2023-12-28", "2024-01-04"),
        ("从3月3日到3月5日我在哪里？", "2026-03-03", "2026-03-06"),
        ("去年3月到5月我在上海", "2025-03-01", "2025-06-01"),
        ("I went to Japan in May and in June", "2026-05-01", "2026-06-01"),  # two times, not a range
        ("I will go to school today to learn", "2026-12-02", "2026-12-03"),
        # Days of one month, the second end a bare day: each was its first day alone.
        ("I was in Rome May 2-9, 2023", "2023-05-02", "2023-05-10"),
        ("2-9 May 2023", "2023-05-02", "2023-05-10"),
        ("3月3日至5日我在上海", "2026-03-03", "2026-03-06"),
        ("2023年3月3日到5日", "2023-03-03", "2023-03-06"),
        ("9-2 May 2023", "2023-05-02", "2023-05-03"),  # no range runs backwards: the day that reads
    ],
)
def test_two_times_joined_as_a_range_are_one_span(said: str, start: str, end: str) -> None:
    span = find_time_span(said, datetime(2026, 12, 2, 15, tzinfo=UTC))
    assert span is not None and (span.start.date().isoformat(), span.end.date().isoformat()) == (start, end)


def test_a_range_in_the_question_finds_the_turns_of_every_day_in_it(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    turns = [
        ("2023-08-09T10:00:00+00:00", "Practice was long today, coach made us run sprints"),
        ("2023-08-12T10:00:00+00:00", "I'm in Chicago this week, the locals are really friendly"),
        ("2023-08-14T10:00:00+00:00", "Went to the Art Institute, saw so many paintings"),
        ("2023-08-20T10:00:00+00:00", "Back home and met my teammates again"),
    ]
    for when, text in turns:
        memory.add([{"role": "user", "content": text, "timestamp": when}], user_id="john", session_id=when[:10])
    hits = memory.search("What did I do between August 11 and August 15 2023?", user_id="john", limit=2)
    assert {hit.text for hit in hits} == {turns[1][1], turns[2][1]}


def test_a_year_in_the_question_finds_that_years_turns(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    turns = [
        ("2024-05-03T10:00:00+08:00", "我在成都学了川菜"),
        ("2025-08-20T10:00:00+08:00", "I started learning the cello"),
    ]
    for when, text in turns:
        memory.add([{"role": "user", "content": text, "timestamp": when}], user_id="lin", session_id=when[:10])
    for question in ("what did I do in 2024?", "2024年我做了什么"):
        assert [hit.text for hit in memory.search(question, user_id="lin")][:1] == ["我在成都学了川菜"]


def test_a_holiday_in_a_named_time_asks_about_that_time(clocked_memory: Callable[..., Memory]) -> None:
    """ "Where did we go on holiday in summer 2024?" shares no word with the Crete turn and returned nothing."""
    memory = clocked_memory()
    crete = "Just back from two weeks in Crete with the family, Leo loved the beaches."
    memory.add([{"role": "user", "content": crete, "timestamp": "2024-08-25T19:00:00+01:00"}], user_id="h")
    memory.add([{"role": "user", "content": "Camping in the Lake District, it has rained every single day.",
                 "timestamp": "2025-08-12T20:00:00+01:00"}], user_id="h")  # fmt: skip
    hits = memory.search("Where did we go on holiday in summer 2024?", user_id="h")
    assert [hit.text for hit in hits][:1] == [crete]


def test_as_of_answers_from_the_old_version(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer, clock: ManualClock
) -> None:
    memory = _scripted(store, embedder, server, clock)
    server.enqueue(_fact("User likes coffee"))
    memory.add("I like coffee", user_id="u1", infer=True, wait=True)
    before_change = clock.advance(days=10)
    clock.advance(days=10)
    server.enqueue(_fact("User prefers tea now"), Reply(respond=_update_first_existing))
    memory.add("I prefer tea now", user_id="u1", infer=True, wait=True)
    exclude = {"exclude_kind": ["episode"]}
    # "drink" shares no word with either fact and is only loosely similar: ask for every candidate (threshold 0)
    assert [h.text for h in memory.search("drink", user_id="u1", filters=exclude, threshold=0)] == [
        "User prefers tea now"
    ]
    then = memory.search("drink", user_id="u1", filters=exclude, as_of=before_change, threshold=0)
    assert [h.text for h in then] == ["User likes coffee"]
    assert then[0].memory.status == MemoryStatus.SUPERSEDED


def test_a_keyed_value_is_true_from_its_event_time_and_an_older_one_never_replaces_a_newer(
    clocked_memory: Callable[..., Memory],
) -> None:
    """A key's values dated with event_time were each valid from when they were added, so as_of any past moment
    answered with the first value, and a value dated 2021 sent after one dated 2023 replaced it."""
    memory = clocked_memory()

    def at(year: int, month: int = 1) -> datetime:
        return datetime(year, month, 1, tzinfo=UTC)

    for text, since in (("住在杭州", at(2020)), ("住在深圳", at(2023, 6)), ("住在北京", at(2021, 5))):
        memory.add(text, user_id="w", key="me:home:city", event_time=since)

    def city(**when: datetime) -> str:
        return memory.search("me:home:city", user_id="w", **when)[0].text  # type: ignore[arg-type]

    assert city() == "住在深圳"  # the newest event is current, although 北京 came last
    assert [city(as_of=at(year)) for year in (2020, 2022, 2024)] == ["住在杭州", "住在北京", "住在深圳"]
    assert city(as_of=at(2021, 4)) == "住在杭州" and city(as_of=at(2023, 5)) == "住在北京"
    assert {m.text for m in memory.get_all(user_id="w")} == {"住在深圳"}
    # an earlier value is history: a new text for it was accepted and reopened it beside the current one
    [earlier] = [m for m in memory.get_all(user_id="w", filters={"status": ["superseded"]}) if m.text == "住在北京"]
    with pytest.raises(ConflictError, match="earlier value"):
        memory.update(earlier.id, "住在北京海淀", user_id="w")
    assert memory.update(earlier.id, metadata={"checked": True}, user_id="w").metadata["checked"] is True
    assert [city(as_of=at(year)) for year in (2020, 2022, 2024)] == ["住在杭州", "住在北京", "住在深圳"]


def test_deleting_an_earlier_value_keeps_the_time_it_stopped_being_true(clocked_memory: Callable[..., Memory]) -> None:
    """Deleting 北京 (replaced in 2024) set its end to the delete time: as_of 2025 then answered with both values."""
    memory = clocked_memory()
    memory.add("住在北京", user_id="d", key="d:home:city", event_time=datetime(2020, 1, 1, tzinfo=UTC))
    memory.add("住在杭州", user_id="d", key="d:home:city", event_time=datetime(2024, 1, 1, tzinfo=UTC))
    [earlier] = memory.get_all(user_id="d", filters={"status": ["superseded"]})
    deleted = memory.delete(earlier.id, user_id="d", reason="wrong")
    assert deleted.valid_to == datetime(2024, 1, 1, tzinfo=UTC)
    then = memory.search("d:home:city", user_id="d", as_of=datetime(2025, 1, 1, tzinfo=UTC), threshold=0)
    assert [hit.text for hit in then] == ["住在杭州"]


def test_a_question_naming_a_past_time_gets_the_value_the_key_held_then(clocked_memory: Callable[..., Memory]) -> None:
    """Search reads current values: "Where did I work in 2024?" found only ByteDance (since 2025, lifted as the
    key the question names), and Shopee, the employer all through 2024, was not searched at all."""
    memory = clocked_memory()
    memory.add("Shopee", user_id="k", key="k:work:employer", event_time=datetime(2023, 3, 1, tzinfo=UTC))
    memory.add("ByteDance", user_id="k", key="k:work:employer", event_time=datetime(2025, 11, 1, tzinfo=UTC))
    memory.add("南京", user_id="k", key="k:home:city", event_time=datetime(2019, 6, 1, tzinfo=UTC))
    memory.add("杭州", user_id="k", key="k:home:city", event_time=datetime(2025, 8, 1, tzinfo=UTC))
    memory.add("下周三要去北京出差，住在国贸附近。", user_id="k")
    assert memory.search("Where did I work in 2024?", user_id="k")[0].text == "Shopee"
    assert memory.search("2024年我住在哪？", user_id="k")[0].text == "南京"
    assert memory.search("Where do I work?", user_id="k")[0].text == "ByteDance"  # no time named: the current one
    for before in ("我以前在哪家公司上班？", "Where did I use to work?", "Where did I work before?"):
        assert memory.search(before, user_id="k")[0].text == "Shopee", before
    assert "Shopee" not in [hit.text for hit in memory.search("Where do I work?", user_id="k")]


def test_a_question_naming_a_past_time_gets_every_value_the_key_held_then_the_longest_first(
    clocked_memory: Callable[..., Memory],
) -> None:
    """ "Where did I work in 2023?" got the employer of December only (the value held at the end of the year), not
    the one of March to November; "Where did I work in June 2023?" got none of 2023 at all, June read as a person's
    name, so the question was not about the user's own key (found by a user trial with an imported history)."""
    memory = clocked_memory()
    for value, start in (("百度", datetime(2022, 3, 10)), ("ByteDance", datetime(2023, 3, 27)),
                         ("Alibaba", datetime(2023, 12, 1)), ("星河科技", datetime(2025, 10, 1))):  # fmt: skip
        memory.add(value, user_id="lin", key="work:employer", event_time=start.replace(tzinfo=UTC))
    hits = memory.search("Where did I work in 2023?", user_id="lin")
    assert [hit.text for hit in hits][:3] == ["ByteDance", "百度", "Alibaba"]
    assert memory.search("2023年我在哪里工作？", user_id="lin")[0].text == "ByteDance"
    for question in ("Where did I work in June 2023?", "2023年6月我在哪里工作？"):
        assert memory.search(question, user_id="lin")[0].text == "ByteDance", question


def test_a_question_for_every_value_of_a_key_lists_the_earlier_ones_after_the_current(
    clocked_memory: Callable[..., Memory],
) -> None:
    """ "我工作过哪些公司？" / "What companies have I worked for?" found the current employer only: search reads
    current values (found by a user trial)."""
    memory = clocked_memory()
    for value, year in (("网易", 2021), ("腾讯", 2023), ("阿里巴巴", 2025)):
        memory.add(value, user_id="e", key="user:work:employer", event_time=datetime(year, 1, 1, tzinfo=UTC))
    for question in ("我工作过哪些公司？", "What companies have I worked for?", "How many jobs have I had?"):
        assert [hit.text for hit in memory.search(question, user_id="e")][:3] == ["阿里巴巴", "腾讯", "网易"], question
    assert [hit.text for hit in memory.search("我在哪家公司上班？", user_id="e")] == ["阿里巴巴"]


def test_a_keyed_value_dated_later_than_now_is_refused_and_nothing_changes(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """A value dated 2030 answered as current at once; stored as the key's record instead, it hid the value true
    now from search and listings. A key holds the value true now: a later one is refused with what to do."""
    memory = clocked_memory()
    memory.add("Postgres 15", user_id="kf", key="app:db:engine")
    with pytest.raises(InvalidInputError, match=r"later than now\. Add the value when it takes effect"):
        memory.add("Postgres 17 (planned)", user_id="kf", key="app:db:engine", event_time=clock() + timedelta(days=9))
    assert [h.text for h in memory.search("app:db:engine", user_id="kf")] == ["Postgres 15"]
    assert [m.text for m in memory.get_all(user_id="kf")] == ["Postgres 15"]
    memory.add("Plan: Postgres 17 next week", user_id="kf", event_time=clock() + timedelta(days=9))  # no key: fine
    skewed = memory.add("Postgres 16", user_id="kf", key="app:db:engine", event_time=clock() + timedelta(minutes=2))
    assert skewed.results[0].event == "UPDATE"  # a caller's clock a little ahead is not a later day


def test_a_new_value_takes_no_event_time_of_the_value_it_replaces(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    memory.add("Python 3.11", user_id="u", key="app:py", event_time=datetime(2020, 1, 1, tzinfo=UTC))
    memory.add("Python 3.12", user_id="u", key="app:py")
    [current] = [m for m in memory.get_all(user_id="u") if m.key == "app:py"]
    assert current.text == "Python 3.12" and current.event_time is None


def test_time_travel_sees_the_text_an_edit_or_a_new_key_value_replaced(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """update() and a new value for a key keep the memory's id; the text they replace stays findable as of then
    (it lived only in history before, and as_of= / known_at= answered with today's text)."""
    memory = clocked_memory()
    key_id = memory.add("Postgres 16", user_id="u", key="app:db:engine").results[0].id
    home_id = memory.add("Lives in Shanghai", user_id="u").results[0].id
    then = clock.advance(days=30)
    clock.advance(days=30)
    assert memory.add("DuckDB 1.5", user_id="u", key="app:db:engine").results[0].id == key_id
    assert memory.update(home_id, "Lives in Hangzhou", user_id="u").id == home_id

    def texts(query: str, **when: object) -> list[str]:
        return [hit.text for hit in memory.search(query, user_id="u", threshold=0, **when)]  # type: ignore[arg-type]

    assert texts("app:db:engine")[0] == "DuckDB 1.5" and texts("where does the user live")[0] == "Lives in Hangzhou"
    for when in ({"as_of": then}, {"known_at": then}):
        assert texts("app:db:engine", **when)[0] == "Postgres 16"
        assert texts("where does the user live", **when)[0] == "Lives in Shanghai"
    # The exact key lookup honours every filter: nothing held the key before it was added, nor has that metadata.
    assert texts("app:db:engine", as_of=START - timedelta(days=1)) == []
    assert texts("app:db:engine", filters={"metadata": {"nope": "x"}}) == []
    every = {"status": ["active", "superseded"]}  # both versions pass: the current one is the key's answer
    assert texts("app:db:engine", filters=every)[0] == "DuckDB 1.5"
    live = {m.text for m in memory.get_all(user_id="u")}
    assert live == {"DuckDB 1.5", "Lives in Hangzhou"}  # the kept versions are closed, not live
    assert memory.get(key_id, user_id="u").valid_from == clock.now
    assert [e.old_text for e in memory.history(home_id, user_id="u")][-1] == "Lives in Shanghai"
    kept = memory.get_all(user_id="u", filters={"status": ["superseded"]})
    assert {m.text for m in kept} == {"Postgres 16", "Lives in Shanghai"}
    for version in kept:  # a kept version has a history of its own (the console and `history` show it)
        assert memory.history(version.id, user_id="u")[0].details["superseded_by"] in (key_id, home_id)


def test_an_edited_turn_is_corrected_as_said_not_re_dated(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """A turn is what was said when it was said: editing its text corrects the record. Re-dated to the edit, as_of
    its own time answered with the uncorrected text; record time (known_at) still sees what the store held."""
    memory = clocked_memory()
    said = datetime(2024, 3, 2, 12, 0, tzinfo=UTC)
    turn = memory.add([{"role": "user", "content": "I had ramen for lunch", "timestamp": said.isoformat()}],
                      user_id="e").results[0]  # fmt: skip
    before_edit = clock.advance(days=1)
    clock.advance(days=1)
    edited = memory.update(turn.id, "I had tonkotsu ramen for lunch", user_id="e")
    assert edited.valid_from == said and edited.event_time == said

    def texts(**when: object) -> list[str]:
        return [hit.text for hit in memory.search("lunch", user_id="e", threshold=0, **when)]  # type: ignore[arg-type]

    assert texts(as_of=datetime(2024, 12, 1, tzinfo=UTC)) == ["I had tonkotsu ramen for lunch"]
    assert texts(known_at=before_edit) == ["I had ramen for lunch"]
    assert texts() == ["I had tonkotsu ramen for lunch"]


def test_coriander_conflict_resolves_to_the_newer_event_in_either_order(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer, clock: ManualClock
) -> None:
    memory = _scripted(store, embedder, server, clock)
    exclude = {"exclude_kind": ["episode"]}
    for user, order in (("in-order", ("2023-05-01", "2024-05-01")), ("reversed", ("2024-05-01", "2023-05-01"))):
        texts = {"2023-05-01": "User hates coriander", "2024-05-01": "User likes coriander"}
        # Imported history: each turn carries the time it was said, which becomes its fact's valid time.
        server.enqueue(_fact(texts[order[0]]))
        memory.add([{"role": "user", "content": "coriander", "timestamp": order[0]}], user_id=user, infer=True,
                   wait=True)  # fmt: skip
        server.enqueue(_fact(texts[order[1]]), Reply(respond=_update_first_existing))
        memory.add([{"role": "user", "content": "coriander", "timestamp": order[1]}], user_id=user, infer=True,
                   wait=True)  # fmt: skip
        current = [h.text for h in memory.search("coriander", user_id=user, filters=exclude)]
        assert current == ["User likes coriander"], (user, current)
        history = memory.get_all(user_id=user, filters={**exclude, "status": ["superseded"]})
        assert [item.text for item in history] == ["User hates coriander"]


def test_relative_time_becomes_event_time_of_the_fact(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer, clock: ManualClock
) -> None:
    memory = _scripted(store, embedder, server, clock)
    said_at = datetime(2026, 3, 4, 20, 0, tzinfo=UTC)  # a Wednesday
    clock.now = max(clock.now, said_at)  # a turn is said before it is stored
    server.enqueue(completion({"facts": [{"text": "用户上周五去了医院", "kind": "event", "sources": [1]}]}))
    memory.add(
        [{"role": "user", "content": "我上周五去了医院", "timestamp": said_at}], user_id="u1", infer=True, wait=True
    )
    [fact] = memory.get_all(user_id="u1", filters={"kind": ["event"]})
    assert fact.event_time == datetime(2026, 2, 27, tzinfo=UTC)  # the Friday of the previous week
    assert fact.created_at == clock.now  # record time stays the time it was stored


def test_a_time_the_model_changed_dates_nothing(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer, clock: ManualClock
) -> None:
    """The bundled model turned "I moved to Hangzhou last month" into "用户去年搬到杭州", and the fact was dated a
    year early (valid from 2024-01-01). A time the turn does not say is not the fact's time; the turn's is."""
    memory = _scripted(store, embedder, server, clock)
    turn = {"role": "user", "content": "我上个月搬到了杭州", "timestamp": datetime(2025, 6, 15, 2, 0, tzinfo=UTC)}
    server.enqueue(_fact("用户去年搬到杭州"), _fact("用户去年搬到杭州"))  # asked to keep the turn's words, it repeats
    memory.add([turn], user_id="u1", infer=True, wait=True)
    server.enqueue(_fact("用户上个月搬到了杭州"))
    memory.add([turn], user_id="u2", infer=True, wait=True)
    for user in ("u1", "u2"):  # the model's "last year" dates nothing: the turn's "last month" does
        [fact] = memory.get_all(user_id=user, filters={"exclude_kind": ["episode"]})
        assert fact.event_time == fact.valid_from == datetime(2025, 5, 1, tzinfo=UTC)


def test_time_in_the_query_prefers_memories_from_that_range(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    memory = clocked_memory()
    last_week = clock.now - timedelta(days=5)
    memory.add("读了一篇关于检索增强生成的论文", user_id="u1", event_time=clock.now - timedelta(days=60))
    recent = memory.add("读了一篇关于检索增强生成和记忆的论文", user_id="u1", event_time=last_week)
    memory.add(
        "Read a paper on retrieval-augmented generation", user_id="u1", event_time=clock.now - timedelta(days=60)
    )
    hits = memory.search("我上周读了什么论文？", user_id="u1", limit=2)
    assert hits[0].id == recent.results[0].id, [hit.text for hit in hits]
    assert hits[0].breakdown.time_boost > 1 and hits[1].breakdown.time_boost == 1


def test_a_time_word_does_not_answer_an_off_topic_question(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """Every memory of the named range had at least 0.15 relevance: "what did the vet say last week?" answered with
    that week's chatter, where "what did the vet say?" rightly answered nothing."""
    memory = clocked_memory()
    memory.add(
        [{"role": "user", "content": t, "timestamp": clock.now - timedelta(days=5)} for t in ("lol", "哈哈哈笑死")],
        user_id="u1",
    )
    assert memory.search("what did the vet say?", user_id="u1") == []
    assert memory.search("what did the vet say last week?", user_id="u1") == []


def test_chatter_of_the_named_week_stays_below_the_topical_answer(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """Any turn of last week at the cutoff gained the whole boost: "哈哈哈哈笑死我了" (0.10 -> 0.53) answered
    "上周我去哪里出差了？" above the trip, which was announced the week before."""
    memory = clocked_memory()
    said = [(12, "我下周要去Tokyo出差，大概待五天。"), (6, "哈哈哈哈笑死我了"), (6, "lol that's hilarious")]
    memory.add(
        [{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)} for days, text in said],
        user_id="mei",
    )
    hits = memory.search("上周我去哪里出差了？", user_id="mei")
    assert hits[0].text == "我下周要去Tokyo出差，大概待五天。", [(h.text, h.score) for h in hits]
    # A question about the week alone lists the week: its chatter, and the trip it was planned for.
    assert {h.text for h in memory.search("我上周做了什么？", user_id="mei")[:3]} == {text for _, text in said}


def test_a_question_about_a_weekend_alone_lists_that_weekend_first(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "What did I do last weekend?" named no time ("Last month I visited my parents" answered first); in
    "上周末我做了什么？" the "做" matched "我前天在家做了红烧肉", said after the weekend, which answered above
    the hike."""
    memory = clocked_memory()
    weekend = find_time_span("last weekend", clock.now)
    assert weekend is not None
    said = [(weekend.start + timedelta(hours=10), "上周末我去爬山了，风景很好。"),
            (weekend.start - timedelta(days=2), "我在家做了红烧肉。"),
            (weekend.start - timedelta(days=12), "I visited my parents in Ohio.")]  # fmt: skip
    memory.add([{"role": "user", "content": text, "timestamp": when} for when, text in said], user_id="u1")
    for question in ("What did I do last weekend?", "上周末我做了什么？"):
        hits = memory.search(question, user_id="u1")
        assert hits[0].text == "上周末我去爬山了，风景很好。", (question, [(h.text, h.score) for h in hits])
        assert all(hit.score < hits[0].score for hit in hits[1:])


def test_the_time_a_question_names_is_no_keyword(clocked_memory: Callable[..., Memory], clock: ManualClock) -> None:
    """ "what did I buy this week?" matched "I started learning the violin last week" (said months ago) on "week"
    and missed the laptop bought this week ("bought" is no keyword match for "buy" either)."""
    memory = clocked_memory()
    said = [(0, "Today I bought a new laptop, a ThinkPad X1"), (250, "I started learning the violin last week")]
    memory.add(
        [{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)} for days, text in said],
        user_id="u1",
    )
    hits = memory.search("what did I buy this week?", user_id="u1")
    assert [hit.text for hit in hits] == [said[0][1]], [(h.text, h.score) for h in hits]
    assert hits[0].breakdown.keyword_match and hits[0].breakdown.time_rank == 1


def test_session_context_keeps_the_newest_turns_within_budget(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    turns = [{"role": "user", "content": f"第{i}轮：" + "很长的内容" * 10} for i in range(20)]
    memory.add(turns, user_id="u1", session_id="s1")
    window = memory.session_context("s1", user_id="u1", budget_tokens=200)
    assert 0 < len(window) < 20 and window[-1].content.startswith("第19轮")
    assert [t.content for t in window] == [t["content"] for t in turns[-len(window) :]]


def test_idle_session_is_handed_to_the_write_path(clocked_memory: Callable[..., Memory], clock: ManualClock) -> None:
    memory = clocked_memory(write={"background": False, "trigger": "cues", "every_n": 50})
    memory.add("The meeting room is on the third floor.", user_id="u1", session_id="s1", infer=True)
    assert [job.status.value for job in memory.list_jobs(user_id="u1")] == ["waiting"]
    clock.advance(minutes=45)
    assert memory.maintain().sessions_released == 1
    assert [job.status.value for job in memory.list_jobs(user_id="u1")] == ["queued"]
    # summarised as an ended session is: only end_session wrote a summary, so a session left to go quiet had none
    [summary] = memory.get_all(user_id="u1", session_id="s1", filters={"kind": "summary"})
    assert "third floor" in summary.text


def test_consolidation_keeps_memories_that_name_different_numbers(clocked_memory: Callable[..., Memory]) -> None:
    """Embeddings hardly tell these apart (0.92+): 'Invoice 1001 is paid' was merged into 'Invoice 1002 is paid',
    and 40 colleagues numbered 1 to 40 into one."""
    memory = clocked_memory()
    memory.add(["Invoice 1001 is paid", "Invoice 1002 is paid", "Server db-1 runs PostgreSQL 14",
                "Server db-2 runs PostgreSQL 14"], user_id="u1")  # fmt: skip
    memory.add([f"我的同事{i}号养了一只猫" for i in range(1, 11)], user_id="u1")
    memory.add(["Invoice 1001 is paid.", "我的同事3号养了一只猫。"], user_id="u1")  # the same facts again
    assert memory.consolidate(user_id="u1") == 2
    live = {m.text.rstrip(".。") for m in memory.get_all(user_id="u1", limit=100)}
    assert len(live) == 14 and {"Invoice 1001 is paid", "Invoice 1002 is paid", "我的同事7号养了一只猫"} <= live


def test_consolidation_merges_near_duplicates_and_keeps_provenance(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    memory.add(["User is allergic to peanuts", "User is allergic to peanuts."], user_id="u1", confidence=0.9)
    memory.add("User lives in Chengdu", user_id="u1")
    assert memory.consolidate(user_id="u1") == 1
    live = sorted(m.text for m in memory.get_all(user_id="u1"))
    assert len(live) == 2 and "User lives in Chengdu" in live
    merged = memory.get_all(user_id="u1", filters={"status": ["superseded"]})
    assert len(merged) == 1 and merged[0].valid_to is not None


def test_consolidation_never_moves_a_memory_into_another_scope(clocked_memory: Callable[..., Memory]) -> None:
    """A user's scope lists its agents' memories too: a user-wide memory and an agent's copy of it stay apart
    (merged, the user-wide one was superseded by the agent's copy, which no other agent reads)."""
    memory = clocked_memory()
    memory.add("Allergic to shellfish", user_id="cz", metadata={"source": "doctor"})
    memory.add("allergic to shellfish", user_id="cz", agent_id="travel-bot")
    memory.add("allergic to shell fish", user_id="cz", metadata={"checked": True}, confidence=0.5)  # cosine 0.87
    assert memory.consolidate(user_id="cz", threshold=0.85) == 1
    live = {(m.scope.agent_id, m.text): m for m in memory.get_all(user_id="cz")}
    assert set(live) == {(None, "Allergic to shellfish"), ("travel-bot", "allergic to shellfish")}
    kept = live[(None, "Allergic to shellfish")]
    assert kept.metadata["source"] == "doctor" and kept.metadata["checked"] is True  # the merged one's fields too


def test_a_plan_answers_for_the_time_it_names(clocked_memory: Callable[..., Memory], clock: ManualClock) -> None:
    """A turn's own time is when it was said: "Where am I going next week?" found nothing at all, though the user had
    said "我下周去东京出差" that day (the question's time matched no turn, its rest "where am I going" too little).
    A turn that names a time now belongs to that time, read from the day it was said, also when asked afterwards."""
    memory = clocked_memory()
    said = [(0, "我下周去东京出差"), (0, "I'm flying to Paris next month for a conference"), (0, "明天要去看牙医"),
            (3, "今天天气不错"), (30, "I bought a new laptop yesterday")]  # fmt: skip
    memory.add(
        [{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)} for days, text in said],
        user_id="u1",
    )
    asked = {"Where am I going next week?": said[0][1], "我下周去哪里？": said[0][1], "我下个月去哪？": said[1][1],
             "Where am I going next month?": said[1][1], "What am I doing tomorrow?": said[2][1],
             "我明天要干嘛？": said[2][1]}  # fmt: skip
    for question, answer in asked.items():
        hits = memory.search(question, user_id="u1")
        assert hits and hits[0].text == answer, (question, [(h.text, h.score) for h in hits])
        assert hits[0].breakdown.time_boost > 1
    clock.advance(days=14)  # the trip's week is over: asked about the past, the plan still answers
    for question in ("上周我去哪里出差了？", "What did I do last week?"):
        hits = memory.search(question, user_id="u1")
        assert hits and hits[0].text == said[0][1], (question, [(h.text, h.score) for h in hits])


def test_a_move_after_the_named_year_does_not_answer_for_it(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "Where did I live in 2024?" answered "I moved to Berlin last month" (said in January 2026) above the home of
    that year: the move answers the question's words best, but it came after the year the question names."""
    memory = clocked_memory()
    said = [(1000, "我住在北京朝阳区，离公司很近"), (30, "I moved to Berlin last month"),
            (70, "We went to Japan last month, Kyoto was amazing")]  # fmt: skip
    memory.add(
        [{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)} for days, text in said],
        user_id="u1",
    )
    asked = {"Where did I live in 2024?": said[0][1], "2024年我住在哪？": said[0][1],
             "Where did I live in December 2025?": said[1][1], "Where do I live now?": said[1][1],
             "Where did I travel in November 2025?": said[2][1]}  # fmt: skip
    _answered_first(memory, asked)


def test_age_does_not_decide_a_question_that_names_a_past_time(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """The coffee of last year matched "What did I drink in the mornings last year?" best (relevance 0.95 against
    0.82) and fell below this month's green tea on age and recency alone."""
    memory = clocked_memory()
    pairs = [("I drink coffee every morning.", "I drink green tea every morning.",
              "What did I drink in the mornings last year?"),
             ("My manager is Tom.", "My manager is Aisha.", "Who was my manager last year?"),
             ("我每天坐地铁上班。", "我每天骑电动车上班。", "我去年怎么去上班？")]  # fmt: skip
    asked_at = clock.now
    for number, (old, new, _) in enumerate(pairs):
        for days, text in ((300, old), (20, new)):  # each said, and stored, on its own day
            clock.now = asked_at - timedelta(days=days)
            memory.add(text, user_id=f"u{number}", event_time=clock.now)
    clock.now = asked_at
    for number, (old, new, asked) in enumerate(pairs):
        hits = memory.search(asked, user_id=f"u{number}")
        assert [hit.text for hit in hits][:2] == [old, new], (asked, [(h.text, h.score) for h in hits])


def test_a_plan_whose_time_has_come_answers_beside_the_old_state(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "我下个月要搬到上海了" was never found by "我现在住哪？", not even months after the move it planned: a plan is
    not indexed as what it will answer. Now it is found once its month has begun, and counts for nothing before."""
    memory = clocked_memory()
    said = [(400, "我住在北京朝阳区，离公司很近"), (1, "我下个月要搬到上海了，新工作在浦东"), (1, "今天收拾了行李")]
    memory.add(
        [{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)} for days, text in said],
        user_id="u1",
    )
    for question in ("我现在住哪？", "Where do I live now?"):
        before = {hit.text: hit.breakdown.relevance for hit in memory.search(question, user_id="u1", threshold=0)}
        assert next(iter(before)) == said[0][1] and before.get(said[1][1], 0.0) < 0.1, (question, before)
    clock.advance(days=40)  # said on 1 March: April has begun
    for question in ("我现在住哪？", "Where do I live now?"):
        hits = memory.search(question, user_id="u1")
        assert said[1][1] in [hit.text for hit in hits[:2]], (question, [(h.text, h.score) for h in hits])


def test_a_plan_the_model_dated_answers_once_its_date_has_come(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """An extracted plan carries the time it names as its event_time (write/facts.py) and names no time of its own
    words any more ("用户计划搬到上海"): it was indexed with what it will answer but never read as done."""
    memory = clocked_memory()
    memory.add("我住在北京朝阳区，离公司很近", user_id="u1", event_time=clock.now - timedelta(days=400))
    memory.add("用户计划搬到上海", user_id="u1", event_time=clock.now + timedelta(days=20))
    before = {hit.text: hit.breakdown.relevance for hit in memory.search("我现在住哪？", user_id="u1", threshold=0)}
    assert before.get("用户计划搬到上海", 0.0) < 0.1, before
    clock.advance(days=30)
    hits = memory.search("我现在住哪？", user_id="u1")
    assert "用户计划搬到上海" in [hit.text for hit in hits[:2]], [(h.text, h.score) for h in hits]


def test_recently_in_a_question_is_the_last_month() -> None:
    now = datetime(2026, 3, 15, 14, 0, tzinfo=UTC)
    questions = ("What have I been doing recently?", "我最近在忙什么？", "What am I reading lately?", "这阵子在学什么")
    for question in questions:
        span = recent_span(question, now)
        assert span is not None and span.vague, question
        assert (span.start, span.end) == (datetime(2026, 2, 14, tzinfo=UTC), datetime(2026, 3, 16, tzinfo=UTC))
    assert recent_span("What did I do last week?", now) is None
    assert find_time_span("我最近在忙什么？", now) is None  # a statement's "最近" dates nothing: its timestamp does


def test_a_question_about_recently_lists_the_last_month_and_an_old_history_answers_as_before(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "What have I been doing recently?" returned nothing (no memory holds a word of it), and "recently" named no
    time. Now it is the last month: what was said in it answers, newest first among close calls. A history imported
    from long ago has nothing of the last month: there the question is answered as if it named no time."""
    memory = clocked_memory()
    said = [(200, "I'm learning to play the guitar"), (150, "Started reading Dune"),
            (5, "I've been training for a half marathon"), (3, "最近在学做川菜"),
            (2, "I'm busy with a data migration project at work")]  # fmt: skip
    memory.add([{"role": "user", "content": text, "timestamp": clock.now - timedelta(days=days)}
                for days, text in said], user_id="u1")  # fmt: skip
    recent = {text for days, text in said if days <= 30}
    for question in ("What have I been doing recently?", "我最近在忙什么？"):
        hits = memory.search(question, user_id="u1")
        assert {hit.text for hit in hits[:3]} == recent, (question, [(h.text, h.score) for h in hits])
        assert all(hit.breakdown.time_rank is not None for hit in hits[:3])
    old = clock.now - timedelta(days=900)
    history = ["I adopted a cat named Miso", "I moved to Lisbon for work"]
    memory.add([{"role": "user", "content": text, "timestamp": old} for text in history], user_id="old")
    hits = memory.search("What pet did I adopt recently?", user_id="old")
    assert hits and hits[0].text == "I adopted a cat named Miso"
    assert hits[0].breakdown.time_rank is None and hits[0].breakdown.time_boost == 1.0


def test_a_conversation_saying_recently_names_no_time() -> None:
    conversation = SearchQuery(
        text="最近工作好累啊，老板天天催进度，周末也要加班，我朋友劝我换个工作，可是我又担心找不到更好的，"
        "你说我是不是应该先休息一段时间再说？家里人也很担心我的身体，让我多运动多睡觉。",
        scope=Scope(user_id="u1"),
        now=datetime(2026, 3, 15, tzinfo=UTC),
    )
    assert query_time_span(conversation) is None
    assert query_time_span(conversation.model_copy(update={"text": "我最近在忙什么？"})) is not None


@pytest.mark.parametrize(
    ("said", "asked_on", "start"),
    [
        ("What are my plans for the weekend?", "2026-03-06", "2026-03-07"),  # a Friday: the weekend ahead
        ("What are my plans for the weekend?", "2026-03-09", "2026-03-14"),  # a Monday: the next one
        ("What did I do over the weekend?", "2026-03-09", "2026-03-07"),  # a Monday: the one just gone
        ("What did I do over the weekend?", "2026-03-06", "2026-02-28"),  # a Friday: the one before this week
        ("We went hiking on the weekend", "2026-03-08", "2026-03-07"),  # a Sunday: the one under way
        ("I'll visit my parents over the weekend", "2026-03-04", "2026-03-07"),
        ("I like hiking on the weekend", "2026-03-06", None),  # no tense: a habit, no time
        ("What do I do on the weekend?", "2026-03-06", None),
        ("What am I doing over the weekend?", "2026-03-06", "2026-03-07"),  # an arrangement: the weekend ahead
        ("What is the morning like on the weekend?", "2026-03-06", None),  # "is the morning": no progressive
    ],
)
def test_the_weekend_is_placed_by_the_tense_of_its_sentence(said: str, asked_on: str, start: str | None) -> None:
    span = find_time_span(said, datetime.fromisoformat(asked_on).replace(hour=15, tzinfo=UTC))
    assert (span and span.start.date().isoformat()) == start
    assert span is None or span.end - span.start == timedelta(days=2)


@pytest.mark.parametrize(
    ("said", "start"),
    [  # said on Wednesday 4 March 2026
        ("Going to visit my parents in Ohio on Saturday", "2026-03-07"),
        ("I'll call her on Wednesday", "2026-03-11"),  # today's weekday, to come: next week's
        ("I saw Anna on Monday", "2026-03-02"),
        ("We met on Wednesday", "2026-02-25"),
        ("I play tennis on Saturdays", None),  # a habit
        ("The gym is closed on Sunday", None),  # no tense: no time
        ("I'm flying home on Saturday", "2026-03-07"),  # the present progressive of an arrangement
        ("Is there a meeting on Monday?", "2026-03-09"),  # one thing on the calendar: to come
        ("Do I have any plans on Friday?", "2026-03-06"),
        ("I have a dentist appointment on Wednesday", "2026-03-11"),
        ("We've got a party on Saturday", "2026-03-07"),
        ("I have yoga on Saturday", None),  # no article: may be a habit
        ("Any plans for Saturday?", "2026-03-07"),  # "for" a weekday, and a weekday's part of the day
        ("We went out Friday night", "2026-02-27"),
        ("I like jogging Sunday mornings", None),
        ("Is there a meeting Monday?", "2026-03-09"),  # a weekday with no word before it, the same way
        ("Monday was rough", "2026-03-02"),
        ("Black Friday deals are crazy", None),  # a name, not a day
        ("周一有会吗？", "2026-03-09"),  # a bare 周一 with a tense of its own: the one to come
        ("周一去看了牙", "2026-03-02"),  # ... the one gone
        ("周五开会", "2026-03-06"),  # no tense: this week's, as before
        ("每周一去健身", None),  # every Monday: a habit
        ("上周五", "2026-02-27"),
    ],
)
def test_a_weekday_alone_is_placed_by_the_tense_of_its_sentence(said: str, start: str | None) -> None:
    span = find_time_span(said, datetime(2026, 3, 4, 15, tzinfo=UTC))
    assert (span and span.start.date().isoformat()) == start


def test_a_meeting_asked_about_by_its_weekday_is_the_one_to_come(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "Is there a meeting on Monday?" named no time (no tense): the meeting held this Monday, said later, answered
    above the one scheduled for the next."""
    memory = clocked_memory()
    clock.advance(days=3)  # Thursday 5 March 2026
    said = [(clock.now - timedelta(days=2), "I have a meeting with the landlord on Monday at 10am"),
            (clock.now - timedelta(days=1), "We had a long meeting on Monday about the budget")]  # fmt: skip
    _said(memory, [(when.isoformat(), text) for when, text in said])
    _answered_first(memory, {"Is there a meeting on Monday?": said[0][1], "Do I have a meeting on Monday?": said[0][1]})


def test_plans_for_the_weekend_asked_on_a_friday_find_the_plan_not_last_weekends_outing(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """ "What are my plans for the weekend?" named no time: "I went to the beach on the weekend", said last Monday,
    shares "weekend" with it and answered above the plan for the coming one."""
    memory = clocked_memory()
    clock.advance(days=4)  # Friday 6 March 2026
    said = [(clock.now - timedelta(days=4), "I went to the beach on the weekend, the water was freezing"),
            (clock.now - timedelta(days=2), "Going to visit my parents in Ohio on Saturday")]  # fmt: skip
    memory.add([{"role": "user", "content": text, "timestamp": when} for when, text in said], user_id="u1")
    hits = memory.search("What are my plans for the weekend?", user_id="u1")
    assert hits[0].text == said[1][1], [(h.text, h.score) for h in hits]
    hits = memory.search("What did I do on the weekend?", user_id="u1")
    assert hits[0].text == said[0][1], [(h.text, h.score) for h in hits]


def test_a_key_value_is_no_event_of_a_time_asked_about_alone(clocked_memory: Callable[..., Memory]) -> None:
    """A value is a state: once key values held in the time a question names, the home and the employer answered
    "What did I do last weekend?" beside the camping trip."""
    memory = clocked_memory()
    memory.add("杭州", user_id="w", key="w:home:city", event_time=datetime(2024, 1, 1, tzinfo=UTC))
    memory.add([{"role": "user", "content": "今天去千岛湖露营了", "timestamp": "2026-02-28T10:00:00+00:00"}],
               user_id="w")  # fmt: skip
    assert [hit.text for hit in memory.search("What did I do last weekend?", user_id="w")] == ["今天去千岛湖露营了"]


@pytest.mark.parametrize(
    ("text", "said", "shown"),
    [
        ("用户下个月要搬到上海", "2026-02-05T11:00:00+08:00", "2026-03"),
        ("用户下个月3号去复查", "2026-02-05T11:00:00+08:00", "2026-03-03"),
        ("User went to Japan last year", "2026-02-05T11:00:00+08:00", "2025"),
        ("用户住在北京", "2026-02-05T11:00:00+08:00", "2026-02-05"),  # no period named: the day it holds from
    ],
)
def test_a_memory_shows_the_period_its_words_name_at_that_periods_precision(text: str, said: str,
                                                                              shown: str) -> None:  # fmt: skip
    from zoneinfo import ZoneInfo

    from memstrata.lifecycle.shown_dates import shown_date
    from memstrata.types import MemoryItem, Provenance, Scope

    zone, when = ZoneInfo("Asia/Shanghai"), datetime.fromisoformat(said)
    span = find_time_span(text, when.astimezone(zone))
    item = MemoryItem(id="m1", scope=Scope(user_id="u"), kind="fact", text=text,
                      event_time=span.start if span else None, valid_from=when, created_at=when, updated_at=when,
                      provenance=Provenance(said_at=when))  # fmt: skip
    assert shown_date(item, zone) == shown


def test_a_period_dated_in_another_time_zone_still_shows_at_its_precision() -> None:
    """time.timezone changed after the write: "今年" was dated from 2025-01-01 in UTC and is read in Shanghai, where
    that year starts 8 hours earlier; the line still reads "2025", not "2025-01-01"."""
    from zoneinfo import ZoneInfo

    from memstrata.lifecycle.shown_dates import shown_date
    from memstrata.types import MemoryItem, Provenance, Scope

    when = datetime(2025, 6, 15, 12, tzinfo=UTC)
    span = find_time_span("用户今年68岁", when)
    assert span is not None
    item = MemoryItem(id="m1", scope=Scope(user_id="u"), kind="fact", text="用户今年68岁", event_time=span.start,
                      valid_from=when, created_at=when, updated_at=when,
                      provenance=Provenance(said_at=when))  # fmt: skip
    assert shown_date(item, ZoneInfo("Asia/Shanghai")) == "2025"
