"""Rank stability: reinforcement and recency of *other* memories never change the top hit of a query
whose best match is clearly more relevant; cross-lingual top-1 holds both ways whatever was used before.

Use is simulated by writing access counts and access times through the store (``record_access``),
and by many searches through the facade, with a manual clock so memories age.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import Memory, Scope
from memstrata.config import LifecycleSettings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock

MEMORIES = [
    "I am allergic to peanuts.",
    "My sister lives in Vancouver and works as a nurse.",
    "I go rock climbing every weekend.",
    "我最喜欢的饮料是乌龙茶。",
    "我在学习弹钢琴，每周上两节课。",
    "我的猫叫团子。",
    "My dog Biscuit is a beagle.",
    "我们公司下个月搬到深圳。",
]
CROSS_LINGUAL = [  # (query, the memory it must find first), both directions
    ("我对什么食物过敏？", "I am allergic to peanuts."),
    ("我姐姐住在哪里？", "My sister lives in Vancouver and works as a nurse."),
    ("What is my favourite drink?", "我最喜欢的饮料是乌龙茶。"),
    ("Which instrument am I learning?", "我在学习弹钢琴，每周上两节课。"),
    ("What is my cat's name?", "我的猫叫团子。"),
    ("我的狗是什么品种？", "My dog Biscuit is a beagle."),
]
SAME_LANGUAGE = [("Where does my sister live?", "My sister lives in Vancouver and works as a nurse.")]
USES = st.lists(
    st.tuples(
        st.sampled_from(range(len(MEMORIES))),  # which memory is used
        st.integers(min_value=1, max_value=40),  # how often
        st.floats(min_value=0, max_value=400, allow_nan=False),  # days that pass first
    ),
    min_size=1,
    max_size=5,
)


def _memory(store: Store, embedder: UniversalSentenceEncoder, clock: ManualClock) -> tuple[Memory, dict[str, str]]:
    memory = Memory(store, embedder, clock=clock)
    added = memory.add(MEMORIES, user_id="u1")
    return memory, {event.memory: event.id for event in added.results}


def _clearly_ahead(memory: Memory, query: str, expected: str) -> bool:
    """The expected memory's relevance beats every other by more than lifecycle can move."""
    hits = memory.search(query, user_id="u1", lifecycle=False, record_access=False, threshold=0)
    keep = 1.0 - LifecycleSettings().weight
    return hits[0].text == expected and all(
        hits[0].breakdown.relevance * keep > h.breakdown.relevance for h in hits[1:]
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(uses=USES)
def test_use_of_other_memories_never_buries_a_clearly_better_match(
    store: Store, embedder: UniversalSentenceEncoder, uses: list[tuple[int, int, float]]
) -> None:
    clock = ManualClock(datetime(2026, 3, 2, tzinfo=UTC))
    memory, ids = _memory(store, embedder, clock)
    scope = Scope(user_id="u1")
    expectations = CROSS_LINGUAL + SAME_LANGUAGE
    try:
        assert all(_clearly_ahead(memory, query, expected) for query, expected in expectations)
        for index, times, days in uses:
            clock.advance(days=days)
            for _ in range(times):
                store.record_access(scope, [ids[MEMORIES[index]]], clock.now)
            for query, expected in expectations:
                if MEMORIES[index] == expected:
                    continue  # using the answer itself may only help it
                hits = memory.search(query, user_id="u1", record_access=False)
                assert hits and hits[0].text == expected, (query, [(h.text, h.score) for h in hits])
    finally:
        store.reset()  # every example starts from a fresh store


def test_many_unrelated_searches_do_not_tilt_later_ones(memory: Memory) -> None:
    memory.add(MEMORIES[:5], user_id="u1")
    for _ in range(8):  # the facade may still count returned hits as accessed: ranking must not drift
        memory.search("我对什么过敏？", user_id="u1")
        memory.search("rock climbing weekend", user_id="u1")
    memory.add("我的猫叫团子。", user_id="u1")
    hits = memory.search("What is my cat's name?", user_id="u1")
    assert hits[0].text == "我的猫叫团子。"
    for query, expected in CROSS_LINGUAL[:4]:
        assert memory.search(query, user_id="u1")[0].text == expected
