"""Confidence gating, archive and restore, maintenance (also interrupted), forget and erase_user."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memstrata import ConfirmationRequiredError, Memory
from memstrata.lifecycle import maintain
from memstrata.testing import ManualClock
from memstrata.types import HistoryAction, MemoryStatus

GATED = {"lifecycle": {"pending_below": 0.7}}  # the rules extractor records 0.6: below the gate


def test_low_confidence_fact_waits_then_is_promoted_by_repetition(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory(**GATED)
    memory.add("I love sourdough bread.", user_id="u1", infer=True, wait=True)
    [pending] = memory.review_queue(user_id="u1")
    assert pending.status == MemoryStatus.PENDING and pending.confidence == 0.6
    assert all(hit.memory.kind == "episode" for hit in memory.search("sourdough", user_id="u1"))  # invisible

    memory.add("I love sourdough bread.", user_id="u1", session_id="later", infer=True, wait=True)
    promoted = memory.get(pending.id, user_id="u1")
    assert promoted.status == MemoryStatus.ACTIVE and promoted.confidence == pytest.approx(0.8)
    assert len(promoted.provenance.message_ids) == 2  # both times it was said
    assert memory.history(pending.id, user_id="u1")[-1].action == HistoryAction.CONFIRM
    assert memory.review_queue(user_id="u1") == []


def test_pending_expires_unless_confirmed(clocked_memory: Callable[..., Memory], clock: ManualClock) -> None:
    memory = clocked_memory(**GATED)
    memory.add(["I like jazz.", "I like opera."], user_id="u1", infer=True, wait=True)
    jazz, opera = sorted(memory.review_queue(user_id="u1"), key=lambda m: m.text)
    assert memory.confirm(jazz.id, user_id="u1").status == MemoryStatus.ACTIVE
    clock.advance(days=31)
    report = memory.maintain()
    assert report.expired_pending == 1
    assert memory.get(opera.id, user_id="u1").status == MemoryStatus.DELETED
    assert "pending for over 30 days" in (memory.history(opera.id, user_id="u1")[-1].reason or "")
    assert memory.get(jazz.id, user_id="u1").status == MemoryStatus.ACTIVE


def test_reject_deletes_a_pending_fact(clocked_memory: Callable[..., Memory], clock: ManualClock) -> None:
    memory = clocked_memory(**GATED)
    memory.add("I hate mornings.", user_id="u1", infer=True, wait=True)
    [pending] = memory.review_queue(user_id="u1")
    clock.advance(days=3)
    rejected = memory.reject(pending.id, user_id="u1")
    assert rejected.status == MemoryStatus.DELETED
    # never true: closed where it began (closed at the rejection, time travel showed it as true until then)
    assert rejected.valid_to == pending.valid_from


def test_archive_restore_round_trip(clocked_memory: Callable[..., Memory], clock: ManualClock) -> None:
    memory = clocked_memory()
    kept = memory.add("Passport number ends in 4411", user_id="u1").results[0].id
    idle = memory.add("Favourite ramen shop is Ichiran", user_id="u1").results[0].id
    clock.advance(days=100)
    memory.mark_used([kept], user_id="u1")  # used: stays warm
    clock.advance(days=100)
    assert memory.maintain().archived == 1
    assert memory.get(idle, user_id="u1").status == MemoryStatus.ARCHIVED
    assert idle not in [h.id for h in memory.search("ramen shop", user_id="u1")]
    assert idle in [h.id for h in memory.search("ramen shop", user_id="u1", include_archived=True)]
    restored = memory.restore(idle, user_id="u1")
    assert restored.status == MemoryStatus.ACTIVE and restored.valid_to is None
    actions = [e.action for e in memory.history(idle, user_id="u1")]
    assert actions == [HistoryAction.ADD, HistoryAction.ARCHIVE, HistoryAction.RESTORE]
    assert memory.search("ramen shop", user_id="u1")[0].id == idle


def test_interrupted_maintenance_is_consistent_and_can_be_rerun(
    clocked_memory: Callable[..., Memory], clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = clocked_memory()
    ids = [event.id for event in memory.add([f"old note {i}" for i in range(7)], user_id="u1").results]
    clock.advance(days=400)
    monkeypatch.setattr(maintain, "BATCH", 2)
    calls = iter(range(100))
    first = memory.maintain(stop=lambda: next(calls) >= 1)  # "killed" after the first batch
    assert first.archived == 2
    for memory_id in ids:  # every archived memory has its history row, every other one is untouched
        item = memory.get(memory_id, user_id="u1")
        archived_events = [e for e in memory.history(memory_id, user_id="u1") if e.action == HistoryAction.ARCHIVE]
        assert (item.status == MemoryStatus.ARCHIVED) == (len(archived_events) == 1)
    assert memory.maintain().archived == 5
    assert memory.maintain().archived == 0


def test_forget_previews_then_deletes_with_the_reason(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    memory.add(["My ex-partner is called Alex", "Alex and I broke up last year", "I work as a pharmacist"],
               user_id="u1")  # fmt: skip
    preview = memory.forget("what I said about Alex", user_id="u1")
    assert not preview.deleted and {m.text for m in preview.matched} >= {"My ex-partner is called Alex"}
    assert "I work as a pharmacist" not in {m.text for m in preview.matched}
    assert len(memory.get_all(user_id="u1")) == 3
    done = memory.forget("what I said about Alex", user_id="u1", confirm=True)
    assert done.deleted and {m.status.value for m in done.matched} == {"deleted"}  # as they are after it
    assert [m.text for m in memory.get_all(user_id="u1")] == ["I work as a pharmacist"]
    gone = done.matched[0]
    assert memory.history(gone.id, user_id="u1")[-1].reason == "forget: what I said about Alex"


def test_forget_takes_every_memory_of_the_same_text_and_pending_ones(clocked_memory: Callable[..., Memory]) -> None:
    """Search shows one memory per text: the fact kept word for word from its turn stayed active and searchable
    after forget() deleted the episode, and a pending copy waited in review to be confirmed back."""
    memory = clocked_memory(**GATED)
    memory.add([{"role": "user", "content": "我对花生过敏。"}], user_id="lin", infer=True, wait=True)
    memory.add("我对花生过敏。", user_id="lin", kind="preference", confidence=0.6)  # a pending twin
    held = memory.get_all(user_id="lin", filters={"status": ["active", "pending"]})
    assert len(held) == 3, [(m.kind, m.status.value) for m in held]
    done = memory.forget("我对花生过敏", user_id="lin", confirm=True)
    assert len(done.matched) == 3 and {m.status.value for m in done.matched} == {"deleted"}
    assert memory.search("花生", user_id="lin") == [] and memory.review_queue(user_id="lin") == []


def test_forgotten_turns_no_longer_reach_the_agent(clocked_memory: Callable[..., Memory]) -> None:
    """forget() soft-deleted the episodes but kept their raw turns, which session context and messages() still
    handed to the agent."""
    memory = clocked_memory()
    turns = [{"role": "user", "content": "今天我想吃泰国菜，不要花生"}, {"role": "user", "content": "I like jazz"}]
    memory.add(turns, user_id="alice", session_id="s1")
    done = memory.forget("花生", user_id="alice", confirm=True)
    assert [m.text for m in done.matched] == ["今天我想吃泰国菜，不要花生"]
    for shown in (memory.session_context("s1", user_id="alice"),
                  [turn.message for turn in memory.messages(user_id="alice")]):  # fmt: skip
        assert [turn.content for turn in shown] == ["I like jazz"]
    assert memory.history(done.matched[0].id, user_id="alice")[-1].reason == "forget: 花生"


def test_forgotten_texts_stay_forgotten_in_time_travel(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """A forgotten memory came back through as_of / known_at, and the value an edit of a forgotten key replaced
    stayed readable as a kept version."""
    memory = clocked_memory()
    memory.add("Zhao's diary: 我今天很难过", user_id="zhao")
    memory.add("1234", key="zhao:bank:pin", user_id="zhao")
    clock.advance(days=1)
    memory.add("9876", key="zhao:bank:pin", user_id="zhao")
    then = clock()
    clock.advance(days=1)
    assert len(memory.forget("Zhao's diary", user_id="zhao", confirm=True).matched) == 1
    # the value the edit replaced is found and forgotten with it
    assert {m.text for m in memory.forget("zhao:bank:pin", user_id="zhao", confirm=True).matched} == {"9876", "1234"}
    for query in ("diary", "zhao:bank:pin", "bank pin 1234"):
        for moment in ({}, {"as_of": then}, {"known_at": then}):
            assert memory.search(query, user_id="zhao", threshold=0, **moment) == [], (query, moment)
    statuses = {m.text: m.status.value for m in memory.get_all(user_id="zhao", filters={"status": ["deleted",
                "superseded", "active"]})}  # fmt: skip
    assert statuses == {"Zhao's diary: 我今天很难过": "deleted", "1234": "deleted", "9876": "deleted"}


def test_erase_user_leaves_nothing(clocked_memory: Callable[..., Memory]) -> None:
    memory = clocked_memory()
    memory.add([{"role": "user", "content": "我住在成都，喜欢火锅"}], user_id="gone", infer=True, wait=True)
    memory.add("Secret project codename Falcon", user_id="gone", agent_id="a1")
    memory.add("Secret project codename Falcon", user_id="stays")
    with pytest.raises(ConfirmationRequiredError):
        memory.erase_user("gone")
    report = memory.erase_user("gone", confirm=True)
    assert report.deleted["memories"] >= 3 and report.deleted["messages"] == 1
    assert set(report.remaining.values()) == {0}
    assert memory.search("Falcon", user_id="gone") == []
    assert [h.text for h in memory.search("Falcon", user_id="stays")] == ["Secret project codename Falcon"]
    assert memory.stats(user_id="gone").memories_by_status == {}


def test_a_newest_turn_over_the_budget_is_returned_shortened(clocked_memory: Callable[..., Memory]) -> None:
    """session_context returned nothing when the newest turn alone was over the budget."""
    from memstrata.lifecycle.session import estimate_tokens

    memory = clocked_memory()
    memory.add([{"role": "user", "content": "short one"}, {"role": "user", "content": "很长的一句话。" * 3000}],
               user_id="u", session_id="s")  # fmt: skip
    [turn] = memory.session_context("s", user_id="u", budget_tokens=50)
    assert turn.content.startswith("很长的一句话。") and turn.content.endswith("…")
    assert estimate_tokens(turn.content) + 4 <= 50
    assert memory.session_context("s", user_id="u", budget_tokens=30_000)[0].content == "short one"


def test_forget_takes_values_replaced_since_and_leaves_what_only_sat_beside_them(
    clocked_memory: Callable[..., Memory], clock: ManualClock
) -> None:
    """A user trial: forgetting "what I said about rock climbing" also deleted "thanks, that's all for now lol" (on
    the climbing said in the turn before it, indexed beside it), and left the climbing fact a later one had replaced,
    which as_of still found. The turn kept beside a forgotten one held it in its index and showed it as "> before"."""
    memory = clocked_memory()
    memory.add([{"role": "user", "content": "On weekends I love rock climbing."},
                {"role": "user", "content": "thanks, that's all for now lol"}], user_id="dan")  # fmt: skip
    climbing = memory.add("User likes rock climbing", user_id="dan", kind="fact").results[0].id
    then = clock()
    clock.advance(days=1)
    memory.update(climbing, "User likes bouldering and rock climbing", user_id="dan")
    clock.advance(days=1)
    done = memory.forget("what I said about rock climbing", user_id="dan", confirm=True)
    assert "thanks, that's all for now lol" not in {m.text for m in done.matched}
    [left] = memory.get_all(user_id="dan")
    assert left.text == "thanks, that's all for now lol" and "preceding_turns" not in left.metadata  # nor beside it
    assert "love rock climbing" not in str(memory.history(left.id, user_id="dan"))  # the history keeps no copy
    for moment in ({}, {"as_of": then}, {"known_at": then}):
        found = memory.search("rock climbing", user_id="dan", threshold=0, **moment)
        assert not [hit for hit in found if "climbing" in hit.text or hit.breakdown.keyword_rank], moment
    assert "climbing" not in memory.context("What do I do on weekends?", user_id="dan").text
