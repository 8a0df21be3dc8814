"""The sync planner: a pure function from what is on disk and what is indexed to what must change.

Both sides are ``{note path: content checksum}``. A path only on disk is new, a path on both sides
with another checksum was edited, a path only in the index was deleted, unless a new path carries
the same checksum: then the note was moved (renamed), and its index entries, usage counts and
history move with it. Ties (several copies of one file) pair up in path order, so a plan is
deterministic. Nothing here touches a file or the store; ``index.py`` applies a plan.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Move:
    source: str
    target: str


@dataclass(frozen=True)
class Plan:
    new: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()
    moved: tuple[Move, ...] = ()
    deleted: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()

    def is_empty(self) -> bool:
        return not (self.new or self.edited or self.moved or self.deleted)

    def summary(self) -> str:
        return (
            f"{len(self.new)} new, {len(self.edited)} edited, {len(self.moved)} moved, "
            f"{len(self.deleted)} deleted, {len(self.unchanged)} unchanged"
        )


def plan(disk: Mapping[str, str], index: Mapping[str, str]) -> Plan:
    """What turns ``index`` into ``disk``: new, edited, moved (same checksum, new path) and deleted notes."""
    appeared = sorted(disk.keys() - index.keys())
    gone = sorted(index.keys() - disk.keys())
    both = sorted(disk.keys() & index.keys())
    by_checksum: dict[str, list[str]] = defaultdict(list)
    for path in appeared:
        by_checksum[disk[path]].append(path)
    moved: list[Move] = []
    deleted: list[str] = []
    for path in gone:
        targets = by_checksum.get(index[path])
        if targets:
            moved.append(Move(path, targets.pop(0)))
        else:
            deleted.append(path)
    targets_taken = {move.target for move in moved}
    return Plan(
        new=tuple(path for path in appeared if path not in targets_taken),
        edited=tuple(path for path in both if disk[path] != index[path]),
        moved=tuple(moved),
        deleted=tuple(deleted),
        unchanged=tuple(path for path in both if disk[path] == index[path]),
    )


def restricted(disk: Mapping[str, str], index: Mapping[str, str], paths: set[str]) -> Plan:
    """The plan for some paths only (what a file watcher reports changed): moves within them are found."""
    return plan({p: c for p, c in disk.items() if p in paths}, {p: c for p, c in index.items() if p in paths})
