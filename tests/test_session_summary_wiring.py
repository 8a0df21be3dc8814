"""end_session stores one summary memory for the session, linked to every turn, and refreshes it in place."""

from __future__ import annotations

from memstrata import Memory


def test_ending_a_session_stores_then_refreshes_its_summary(memory: Memory) -> None:
    turns = [
        {"role": "user", "content": "We adopted a rescue greyhound called Biscuit last weekend."},
        {"role": "assistant", "content": "Congratulations! How is Biscuit settling in?"},
        {"role": "user", "content": "Biscuit sleeps all day and only eats salmon kibble."},
    ]
    added = memory.add(turns, user_id="u1", session_id="s1")
    memory.end_session("s1", user_id="u1")
    [summary] = memory.get_all(user_id="u1", session_id="s1", filters={"kind": "summary"})
    assert "Biscuit" in summary.text and summary.metadata["method"] == "extractive"
    assert set(summary.provenance.message_ids) == set(added.message_ids)
    assert summary.id in [hit.id for hit in memory.search("what food does the greyhound eat", user_id="u1")]

    memory.add([{"role": "user", "content": "Biscuit now also loves long walks on the beach at Brighton."}],
               user_id="u1", session_id="s1")  # fmt: skip
    memory.end_session("s1", user_id="u1")
    [refreshed] = memory.get_all(user_id="u1", session_id="s1", filters={"kind": "summary"})
    assert refreshed.id == summary.id and len(refreshed.provenance.message_ids) == 4
    assert [event.action.value for event in memory.history(summary.id, user_id="u1")] == ["ADD", "UPDATE"]


def test_summaries_can_be_turned_off(store_factory: object, embedder: object) -> None:
    from memstrata.config import load_settings

    store = store_factory("off")  # type: ignore[operator]
    settings = load_settings({"write": {"session_summary": "off"}})
    with Memory(store, embedder, settings=settings) as memory:  # type: ignore[arg-type]
        memory.add([{"role": "user", "content": "A session with a few words in it."}], user_id="u1", session_id="s2")
        memory.end_session("s2", user_id="u1")
        assert memory.get_all(user_id="u1", filters={"kind": "summary"}) == []


def test_a_session_ended_without_its_user_is_summarised_per_user(memory: Memory) -> None:
    """end_session("shared") merged every user's turns into one summary scoped to the session alone."""
    memory.add([{"role": "user", "content": "User A likes football and plays every Sunday."}], user_id="A",
               session_id="shared")  # fmt: skip
    memory.add([{"role": "user", "content": "用户B喜欢下围棋，每周三去棋社。"}], user_id="B", session_id="shared")
    memory.end_session("shared", wait=True)
    for user, mine, theirs in (("A", "football", "围棋"), ("B", "围棋", "football")):
        [summary] = memory.get_all(user_id=user, filters={"kind": "summary"})
        assert mine in summary.text and theirs not in summary.text and summary.scope.user_id == user
