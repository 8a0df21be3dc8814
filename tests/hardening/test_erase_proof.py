"""erase_user proves its work: the user's texts (old versions and raw turns included) are looked for in the
database afterwards, and on SQLite not one byte of them is left in the main file or the WAL."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory


def test_erase_user_leaves_no_text_and_says_what_it_checked(memory: Memory) -> None:
    marker_zh, marker_en = "紫罗兰色的潜水艇编号七三九", "violet submarine number 739 sails at dawn"
    first = memory.add(f"我最喜欢的玩具是{marker_zh}", user_id="lin").results[0]
    memory.update(first.id, "我最喜欢的玩具换成了风筝", user_id="lin")  # the old text lives on as history
    memory.add([{"role": "user", "content": f"Remember: the {marker_en}"}], user_id="lin")
    kept = memory.add("Bob keeps his bicycle in the garage", user_id="bob").results[0]

    report = memory.erase_user("lin", confirm=True)

    assert report.checked_strings >= 2 and report.traces == {}
    assert not any(report.remaining.values())
    assert memory.get(kept.id, user_id="bob").text.startswith("Bob")
    if Path(memory.store.location).is_file():  # SQLite: read the raw bytes of every file of the database
        files = [path for path in Path(memory.store.location).parent.iterdir() if path.is_file()]
        raw = b"".join(path.read_bytes() for path in files)
        for marker in (marker_zh, marker_en, "风筝"):
            assert marker.encode() not in raw
