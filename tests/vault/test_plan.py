"""The sync planner is a pure function: new, edited, moved (same checksum elsewhere) and deleted notes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memstrata.vault import Move, plan


def test_each_kind_of_change() -> None:
    index = {"a.md": "1", "b.md": "2", "c.md": "3", "d.md": "4"}
    disk = {"a.md": "1", "b.md": "2x", "renamed/c.md": "3", "e.md": "5"}
    result = plan(disk, index)
    assert result.new == ("e.md",)
    assert result.edited == ("b.md",)
    assert result.moved == (Move("c.md", "renamed/c.md"),)
    assert result.deleted == ("d.md",)
    assert result.unchanged == ("a.md",)
    assert result.summary() == "1 new, 1 edited, 1 moved, 1 deleted, 1 unchanged"


def test_nothing_to_do() -> None:
    assert plan({"a.md": "1"}, {"a.md": "1"}).is_empty()
    assert plan({}, {}).is_empty()


def test_copies_of_one_file_pair_up_in_path_order() -> None:
    """Two identical notes renamed at once: each old path moves to one new path, deterministically."""
    result = plan({"x/1.md": "same", "x/2.md": "same"}, {"1.md": "same", "2.md": "same"})
    assert result.moved == (Move("1.md", "x/1.md"), Move("2.md", "x/2.md"))
    assert not result.new and not result.deleted


def test_a_moved_and_edited_note_is_deleted_and_new() -> None:
    """A checksum is the only evidence of a move; with the content changed too, it is two changes."""
    result = plan({"new.md": "2"}, {"old.md": "1"})
    assert result.deleted == ("old.md",) and result.new == ("new.md",) and not result.moved


paths = st.sampled_from([f"d{i}/n{j}.md" for i in range(3) for j in range(4)])
states = st.dictionaries(paths, st.sampled_from(["c1", "c2", "c3", "c4"]), max_size=12)


@given(disk=states, index=states)
def test_applying_the_plan_turns_the_index_into_the_disk(disk: dict[str, str], index: dict[str, str]) -> None:
    result = plan(disk, index)
    applied = {path: index[path] for path in result.unchanged}
    applied |= {path: disk[path] for path in result.new + result.edited}
    for move in result.moved:
        assert index[move.source] == disk[move.target]
        applied[move.target] = index[move.source]
    assert applied == disk
    # every indexed path is accounted for exactly once
    sources = list(result.unchanged + result.edited + result.deleted) + [m.source for m in result.moved]
    assert sorted(sources) == sorted(index)
    assert plan(disk, index) == result  # deterministic
