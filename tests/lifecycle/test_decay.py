"""Lifecycle-aware ranking: decay is monotone in age and access; the breakdown shows every factor."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstrata import Memory, Scope
from memstrata.config import LifecycleSettings
from memstrata.lifecycle.decay import lifecycle_factors, lifecycle_multiplier, recency
from memstrata.testing import ManualClock
from memstrata.types import MemoryItem, Provenance

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SETTINGS = LifecycleSettings()


def _item(kind: str, age_days: float, idle_days: float, accesses: int) -> MemoryItem:
    created = NOW - timedelta(days=age_days)
    return MemoryItem(
        id="x", scope=Scope(user_id="u"), kind=kind, text="t", created_at=created, updated_at=created,
        valid_from=created, last_accessed_at=NOW - timedelta(days=min(idle_days, age_days)), access_count=accesses,
    )  # fmt: skip


KINDS = st.sampled_from(["preference", "fact", "episode", "task", "custom_kind"])
DAYS = st.floats(min_value=0, max_value=3000, allow_nan=False)


@given(kind=KINDS, age=DAYS, extra=DAYS, idle=DAYS, accesses=st.integers(0, 10_000), more=st.integers(0, 10_000))
def test_lifecycle_is_monotone_in_age_and_access(
    kind: str, age: float, extra: float, idle: float, accesses: int, more: int
) -> None:
    base = lifecycle_factors(_item(kind, age, idle, accesses), NOW, SETTINGS)
    older = lifecycle_factors(_item(kind, age + extra, idle, accesses), NOW, SETTINGS)
    more_idle = lifecycle_factors(_item(kind, age + extra, idle + extra, accesses), NOW, SETTINGS)
    recalled = lifecycle_factors(_item(kind, age, idle, accesses + more), NOW, SETTINGS)
    assert older.decay <= base.decay
    assert more_idle.recency <= older.recency
    assert recalled.reinforcement >= base.reinforcement
    assert 0 < base.lifecycle <= SETTINGS.max_reinforcement


@given(kind=KINDS, age=DAYS, idle=DAYS, accesses=st.integers(0, 10_000), weight=st.floats(0, 1))
def test_lifecycle_takes_at_most_its_weight(kind: str, age: float, idle: float, accesses: int, weight: float) -> None:
    settings = SETTINGS.model_copy(update={"weight": weight})
    multiplier = lifecycle_multiplier(lifecycle_factors(_item(kind, age, idle, accesses), NOW, settings), settings)
    assert 1.0 - weight - 1e-12 <= multiplier <= 1.0
    # so relevance r_a > r_b / (1 - weight) keeps a above b, whatever either memory's lifecycle is
    strongest = lifecycle_multiplier(lifecycle_factors(_item(kind, 0, 0, 10_000), NOW, settings), settings)
    assert strongest == 1.0


def test_recency_anchors_and_half_lives() -> None:
    assert recency(30, SETTINGS) == pytest.approx(0.5)
    assert recency(90, SETTINGS) == pytest.approx(0.2)
    assert recency(0, SETTINGS) == 1.0
    year_old = {
        kind: lifecycle_factors(_item(kind, 365, 0, 0), NOW, SETTINGS).decay for kind in SETTINGS.half_life_days
    }
    assert year_old["preference"] == pytest.approx(2**-0.5, rel=1e-3)
    assert year_old["fact"] == pytest.approx(0.5, rel=1e-3)
    assert year_old["episode"] < 0.1 and year_old["task"] < 1e-10


def test_recalled_memory_outranks_an_equal_forgotten_one(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    memory = clocked_memory()
    a = memory.add("The team offsite is in Lisbon", user_id="u1").results[0].id
    b = memory.add("The team offsite is in Lisbon!", user_id="u1").results[0].id
    clock.advance(days=60)
    for _ in range(5):
        memory.mark_used([b], user_id="u1")  # b is used often, a is left alone
    hits = memory.search("team offsite Lisbon", user_id="u1", limit=2)
    assert [hit.id for hit in hits] == [b, a]
    factors = hits[0].breakdown.lifecycle
    assert factors is not None and factors.reinforcement > 1 and factors.recency == 1.0
    assert hits[1].breakdown.lifecycle is not None and hits[1].breakdown.lifecycle.recency < 0.35
    assert hits[0].breakdown.final == hits[0].score
    plain = memory.search("team offsite Lisbon", user_id="u1", limit=2, lifecycle=False)
    assert plain[0].breakdown.lifecycle is None


def test_imported_history_ages_from_when_it_was_said() -> None:
    """A turn imported today that was said 400 days ago is 400 days old; so is a fact drawn from it (valid
    from the turn's time); a fact about 1990 learned today is not 36 years old."""
    said, today = NOW - timedelta(days=400), NOW - timedelta(days=1)

    def item(kind: str, *, event_time: datetime | None, valid_from: datetime) -> MemoryItem:
        return MemoryItem(id="x", scope=Scope(user_id="u"), kind=kind, text="t", created_at=today, updated_at=today,
                          valid_from=valid_from, event_time=event_time)  # fmt: skip

    old = lifecycle_factors(_item("episode", 400, 400, 0), NOW, SETTINGS)
    episode = lifecycle_factors(item("episode", event_time=said, valid_from=said), NOW, SETTINGS)
    assert episode.decay == pytest.approx(old.decay) and episode.recency == pytest.approx(old.recency)
    drawn = lifecycle_factors(item("fact", event_time=None, valid_from=said), NOW, SETTINGS)
    assert drawn.decay == pytest.approx(lifecycle_factors(_item("fact", 400, 400, 0), NOW, SETTINGS).decay)
    born = datetime(1990, 5, 1, tzinfo=UTC)
    dated = lifecycle_factors(item("fact", event_time=born, valid_from=born), NOW, SETTINGS)
    assert dated.decay == pytest.approx(lifecycle_factors(_item("fact", 1, 1, 0), NOW, SETTINGS).decay)
    # a fact dated by its own words ("上个月我搬到新加坡了"), drawn from a turn said 400 days ago, learned then
    moved = item("fact", event_time=said - timedelta(days=20), valid_from=said - timedelta(days=20))
    moved = moved.model_copy(update={"provenance": Provenance(source="messages", message_ids=("t1",), said_at=said)})
    assert lifecycle_factors(moved, NOW, SETTINGS).decay == pytest.approx(drawn.decay)


def test_of_two_imported_turns_alike_in_relevance_the_later_one_ranks_first(memory: Memory) -> None:
    now = datetime.now(UTC)  # the fixture's Memory runs on the real clock
    memory.add([{"role": "user", "content": "I live in Shanghai.", "timestamp": now - timedelta(days=400)},
                {"role": "user", "content": "I live in Beijing.", "timestamp": now - timedelta(days=3)}],
               user_id="imp")  # fmt: skip
    hits = memory.search("Which city do I live in?", user_id="imp")
    assert [hit.text for hit in hits[:2]] == ["I live in Beijing.", "I live in Shanghai."]
