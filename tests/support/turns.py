"""A user's turns added as an imported history: each on its own day, so the read path sees them in order."""

from __future__ import annotations

from memstrata import Memory


def say(memory: Memory, user: str, said: list[tuple[str, str]]) -> None:
    """Each ``(YYYY-MM-DD, text)`` added as the user's turn at 10:00 UTC of that day."""
    for day, text in said:
        memory.add([{"role": "user", "content": text, "timestamp": f"{day}T10:00:00Z"}], user_id=user)


def first_answers(memory: Memory, user: str, expected: dict[str, str]) -> None:
    """Each question's first hit starts with the text given for it."""
    for question, answer in expected.items():
        found = memory.search(question, user_id=user)
        assert found and found[0].text.startswith(answer), (question, [hit.text for hit in found])
