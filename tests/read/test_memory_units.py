"""Memory units: each turn is indexed with the turn before it, so an answer is found by its question."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata import Memory, Scope
from memstrata.indexing import index_text
from memstrata.types import Message
from memstrata.write import ingest
from memstrata.write.ingest import CONTEXT_MAX_CHARS, episode_memories

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SCOPE = Scope(user_id="u1")


def _turn(text: str, name: str, minutes: float = 0) -> Message:
    return Message(role="user", content=text, name=name, timestamp=NOW + timedelta(minutes=minutes))


def test_each_episode_carries_the_turn_before_it() -> None:
    question = _turn("How was the support group yesterday?", "Melanie")
    answer = _turn("It was great, I learned so much.", "Caroline", 1)
    first, second = episode_memories([question, answer], SCOPE, {"src": "chat"}, NOW)
    assert "preceding_turns" not in first.metadata
    assert second.metadata == {
        "src": "chat", "role": "user", "speaker": "Caroline",
        "preceding_turns": "Melanie: How was the support group yesterday?",
    }  # fmt: skip
    assert second.text == "It was great, I learned so much."  # the memory's text stays the turn's own
    assert (
        index_text(second)
        == "Caroline: It was great, I learned so much.\nMelanie: How was the support group yesterday?"
    )
    assert index_text(first) == "Melanie: How was the support group yesterday?"


def test_the_previous_stored_turn_is_used_when_turns_arrive_one_by_one() -> None:
    earlier = _turn("Any plans for the weekend?", "Melanie")
    (episode,) = episode_memories([_turn("Camping with the kids!", "Caroline", 2)], SCOPE, {}, NOW, previous=[earlier])
    assert episode.metadata["preceding_turns"] == "Melanie: Any plans for the weekend?"


def test_turns_of_another_conversation_are_not_context() -> None:
    old = _turn("Good night!", "Melanie")
    (episode,) = episode_memories([_turn("Morning! New day.", "Caroline", 60 * 24)], SCOPE, {}, NOW, previous=[old])
    assert "preceding_turns" not in episode.metadata


def test_context_is_bounded() -> None:
    long = _turn("x" * 5000, "Melanie")
    (episode,) = episode_memories([_turn("ok", "Caroline", 1)], SCOPE, {}, NOW, previous=[long])
    assert len(episode.metadata["preceding_turns"]) == CONTEXT_MAX_CHARS
    assert episode.metadata["preceding_turns"].endswith("…")


def test_more_context_turns_can_be_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    turns = [_turn(f"turn {i}", "A" if i % 2 else "B", i) for i in range(4)]
    monkeypatch.setattr(ingest, "CONTEXT_TURNS", 2)
    last = episode_memories(turns, SCOPE, {}, NOW)[-1]
    assert last.metadata["preceding_turns"] == "A: turn 1\nB: turn 2"  # oldest first


def test_an_answer_is_found_by_the_words_of_its_question(memory: Memory) -> None:
    memory.add(
        [
            {"role": "user", "name": "Melanie", "content": "Did you go to the pottery workshop on Friday?"},
            {"role": "user", "name": "Caroline", "content": "Yes! I made a little bowl, so proud of it."},
            {"role": "user", "name": "Melanie", "content": "Nice. My kids started swimming lessons."},
        ],
        user_id="u1",
    )
    hits = memory.search("What did Caroline make at the pottery workshop?", user_id="u1", limit=2)
    assert "Yes! I made a little bowl, so proud of it." in [hit.text for hit in hits]
