"""Export, then import into a fresh store, gives identical memories, history and raw turns."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from memstrata import InvalidInputError, Memory


def _snapshot(memory: Memory, user: str) -> tuple[list[object], list[object], list[object]]:
    everything = {"status": ["active", "pending", "archived", "deleted"]}
    items = memory.get_all(user_id=user, filters=everything, limit=1000, descending=False)
    history = [memory.history(item.id, user_id=user) for item in items]
    turns = [turn.message for turn in memory.messages(user_id=user)]
    return items, history, turns


def test_export_import_round_trip(make_memory: Callable[[str], Memory], tmp_path: Path) -> None:
    source = make_memory("source")
    source.add([{"role": "user", "content": "我住在杭州"}, {"role": "assistant", "content": "Got it."}], user_id="u1")
    kept = source.add("Prefers dark mode", user_id="u1", kind="preference", metadata={"ui": True}).results[0]
    source.update(kept.id, "Prefers dark mode everywhere", user_id="u1")
    gone = source.add("temporary note", user_id="u1").results[0]
    source.delete(gone.id, user_id="u1", reason="cleanup")
    source.search("dark mode", user_id="u1")  # access counts must survive too
    path = tmp_path / "export.jsonl"
    lines = source.export_jsonl(path)
    assert lines == len(path.read_text(encoding="utf-8").splitlines())
    assert "我住在杭州" in path.read_text(encoding="utf-8")  # Chinese stays Chinese, unescaped

    target = make_memory("target")
    assert target.import_jsonl(path).memories == 4
    assert _snapshot(target, "u1") == _snapshot(source, "u1")
    assert target.search("dark mode", user_id="u1", record_access=False)[0].id == kept.id
    assert target.stats().vectors == source.stats().vectors == 4

    again = target.import_jsonl(path)  # importing twice merges: nothing new, nothing doubled (issue 13)
    assert again.memories == 0 and again.already_there > 4 and again.kept_stored == 0
    assert _snapshot(target, "u1") == _snapshot(source, "u1")


def test_import_rejects_garbage_without_writing(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    header = {"type": "header", "format": "memstrata-export", "version": 1, "embedding_id": None}
    path.write_text(json.dumps(header) + "\n" + json.dumps({"type": "memory", "id": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="line 2"):
        memory.import_jsonl(path)
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="cannot read export"):
        memory.import_jsonl(path)
    assert memory.stats().memories_by_status == {}
