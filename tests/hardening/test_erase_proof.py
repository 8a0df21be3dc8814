"""erase_user proves its work: the user's texts (old versions and raw turns included) are looked for in the
database afterwards, and on SQLite not one byte of them is left in the main file or the WAL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.providers.protocol import Embedder
from memstrata.storage.sql import erase as erase_module
from memstrata.storage.sqlite.store import SQLiteStore


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


def _rows_seen_by_another_process(path: Path, text: str) -> int:
    probe = (
        "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
        "print(c.execute('SELECT COUNT(*) FROM memories WHERE text = ?', (sys.argv[2],)).fetchone()[0]); c.close()"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(path), text], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_writes_after_an_erase_survive_another_process_on_the_same_file(tmp_path: Path, embedder: Embedder) -> None:
    """The proof read the database file in this process, and closing that file dropped SQLite's locks: the next
    process to close its connection deleted the WAL under this one, and every write acknowledged after was lost."""
    path = tmp_path / "m.db"
    memory = Memory(SQLiteStore(path), embedder)
    try:
        memory.add("a note to erase", user_id="victim")
        assert memory.erase_user("victim", confirm=True).traces == {}
        assert _rows_seen_by_another_process(path, "nothing") == 0  # another process opens and closes the store
        memory.add("written after the erase", user_id="u")
        assert _rows_seen_by_another_process(path, "written after the erase") == 1
    finally:
        memory.close()
    reopened = Memory(SQLiteStore(path), embedder)
    try:
        assert reopened.search("written after the erase", user_id="u")
    finally:
        reopened.close()


def test_a_write_committed_during_an_erase_stays_whole(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL's READ COMMITTED let each statement of an erase see rows committed in between: the erase
    selected the user's memories first, then deleted history and turns by scope, so a turn written meanwhile lost
    its raw message and history row and its memory stayed behind without them (and the proof failed every time
    a user was active). The erase now reads one snapshot; what another writer commits meanwhile stays whole."""
    if Path(memory.store.location).is_file():
        pytest.skip("SQLite lets no other writer commit during the erase's transaction")
    memory.add([{"role": "user", "content": "我住在杭州"}], user_id="lin")
    forget_texts = erase_module._forget_texts

    def write_meanwhile(*args: object, **kwargs: object) -> int:
        if not written:  # once, though the erase may run again (a conflict with this write)
            written.append(memory.add([{"role": "user", "content": "我刚搬到上海"}], user_id="lin").results[0].id)
        return forget_texts(*args, **kwargs)  # type: ignore[arg-type]

    written: list[str] = []
    monkeypatch.setattr(erase_module, "_forget_texts", write_meanwhile)
    report = memory.erase_user("lin", confirm=True)

    (meanwhile,) = written
    assert report.deleted["messages"] == 1 and report.deleted["memories"] == 1
    assert memory.get(meanwhile, user_id="lin").text == "我刚搬到上海"
    assert [event.action for event in memory.history(meanwhile, user_id="lin")] == ["ADD"]
    assert [stored.message.content for stored in memory.messages(user_id="lin")] == ["我刚搬到上海"]


def test_a_turn_written_during_an_erase_that_quotes_erased_turns_goes_too(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that read the user's turns before the erase committed indexed its new turn with them (the turns
    before it): the erased words lived on in that row and every erase of an active user failed its proof (503).
    Rows of the user written meanwhile that still hold erased words are erased in another round."""
    if Path(memory.store.location).is_file():
        pytest.skip("SQLite lets no other writer commit during the erase's transaction")
    erased = "我住在杭州西湖区文三路一百号"
    memory.add([{"role": "user", "content": erased}], user_id="lin")
    forget_texts = erase_module._forget_texts

    def write_meanwhile(*args: object, **kwargs: object) -> int:
        if not written:
            written.append(memory.add([{"role": "user", "content": "我刚搬到上海"}], user_id="lin").results[0].id)
        return forget_texts(*args, **kwargs)  # type: ignore[arg-type]

    written: list[str] = []
    monkeypatch.setattr(erase_module, "_forget_texts", write_meanwhile)
    report = memory.erase_user("lin", confirm=True)

    assert report.traces == {} and not any(report.remaining.values())
    assert memory.store.find_traces([erased]) == {}
    assert memory.get_all(user_id="lin") == []
