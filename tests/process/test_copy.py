"""`memstrata migrate` carries process memory: SQLite -> PostgreSQL -> SQLite, every table verified by counts
and checksums (booleans, JSON and timestamps compared in one canonical form), and the copies answer alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import StoreSettings, load_settings
from memstrata.errors import StoreError
from memstrata.storage.copy import copy_store
from memstrata.storage.factory import open_store
from memstrata.testing import HashingEmbedder
from process.conftest import STORIES, record_story


@pytest.fixture
def pg_url(postgres_databases: Any, request: pytest.FixtureRequest) -> str:
    url: str = postgres_databases.create(request.node.nodeid)
    return url


def _memory(location: str) -> Memory:
    return Memory(open_store(StoreSettings(path=location)), HashingEmbedder(dims=32),
                  settings=load_settings({"store": {"path": location}}))  # fmt: skip


def _answers(location: str, task_id: str) -> tuple[Any, ...]:
    with _memory(location) as memory:
        tree = memory.tasks.tree(task_id, user_id="u1")
        recalled = memory.tasks.recall(STORIES["en"].goal, user_id="u1")
        return tree, [(r.task.id, [s.id for s in r.path]) for r in recalled], memory.tasks.strategies(user_id="u1")


def test_process_tables_survive_a_round_trip_between_backends(tmp_path: Path, pg_url: str) -> None:
    source, back = str(tmp_path / "source.db"), str(tmp_path / "back.db")
    with _memory(source) as memory:
        recorded = record_story(memory, STORIES["en"], user_id="u1", session_id="s1")
        memory.tasks.add_artifact(recorded.task.id, "notes", text="key id changed in build 812", user_id="u1")
        assert memory.tasks.strategies(user_id="u1")  # something was mined
    there = copy_store(source, pg_url, chunk_size=5)
    tables = {t.table: t for t in there.tables}
    assert there.verified and tables["process_steps"].source_rows == 13 and tables["process_strategies"].copied
    returned = copy_store(pg_url, back, chunk_size=5)
    assert returned.verified
    expected = _answers(source, recorded.task.id)
    assert _answers(pg_url, recorded.task.id) == expected
    assert _answers(back, recorded.task.id) == expected


def test_a_store_is_not_copied_onto_itself_however_it_is_spelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`copy --from task.db --to ./task.db` went ahead (only the identical spelling was refused)."""
    monkeypatch.chdir(tmp_path)
    _memory(str(tmp_path / "task.db")).close()
    (tmp_path / "link.db").symlink_to(tmp_path / "task.db")
    for target in ("./task.db", str(tmp_path / "task.db"), "link.db"):
        with pytest.raises(StoreError, match="same store"):
            copy_store("task.db", target)


def test_a_copy_into_a_store_that_holds_memories_is_verified_by_containment(tmp_path: Path) -> None:
    """Copying one store into another that already held memories always ended 'not verified' (the target's
    own rows made the counts differ), so a merge that worked could not be told from one that did not."""
    source, target = str(tmp_path / "source.db"), str(tmp_path / "target.db")
    with _memory(source) as memory:
        memory.add(["Lin drinks oolong", "林晓住在杭州"], user_id="lin")
    with _memory(target) as memory:
        memory.add("The team uses PostgreSQL 16", user_id="ops")
    merged = copy_store(source, target, chunk_size=1)
    tables = {t.table: t for t in merged.tables}
    assert merged.verified, [(t.table, t.missing) for t in merged.tables if not t.matches]
    assert (tables["memories"].missing, tables["memories"].source_rows, tables["memories"].target_rows) == (0, 2, 3)
    assert tables["messages"].missing is None  # a table the target did not use is compared whole, as before
    with _memory(target) as memory:
        assert {m.text for m in memory.get_all(user_id="lin")} == {"Lin drinks oolong", "林晓住在杭州"}
    with _memory(source) as memory:  # the same id with another text in the source: not copied, so not verified
        lin = memory.get_all(user_id="lin")[0]
        memory.update(lin.id, "Lin drinks green tea now", user_id="lin")
    again = copy_store(source, target)
    assert not again.verified and {t.table: t for t in again.tables}["memories"].missing == 1
