"""The turns ``memstrata add --jsonl`` is given: texts, stdin lines or the lines of a file named, each one turn as a
JSON object. ``add()`` validates each turn's fields; this says which line is not a turn at all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memstrata.errors import InvalidInputError


def jsonl_turns(texts: list[str]) -> list[dict[str, Any]]:
    lines = [line for text in texts for line in _turn_lines(text)]
    return [_turn(line, number) for number, line in enumerate(lines, start=1)]


def _turn_lines(text: str) -> list[str]:
    """A --jsonl text as turns: itself, or the lines of the file it names ("memstrata add --jsonl chat.jsonl" read
    the file name as a turn and said it was not JSON)."""
    if text.lstrip().startswith("{"):
        return [text]
    path = Path(text).expanduser()
    if not path.is_file():
        return [text]  # not JSON: _turn says so
    try:
        return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(
            f"cannot read {path}: {exc}; --jsonl files are UTF-8, one turn object per line"
        ) from None


def _turn(line: str, number: int) -> dict[str, Any]:
    """One --jsonl turn; add() validates its fields."""
    if number == 1:
        line = line.removeprefix("\ufeff")  # a file saved by a Windows editor starts with a byte-order mark
    try:
        turn = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"--jsonl line {number} is not JSON ({exc.msg}); one turn object per line") from None
    if not isinstance(turn, dict):
        raise InvalidInputError(f'--jsonl line {number} is not an object like {{"role": "user", "content": "..."}}')
    return turn
