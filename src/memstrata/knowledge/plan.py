"""The re-ingestion planner: a pure function from what is on disk and what is indexed to the work to do.

Kept free of the store, the file system and the models, so every case (new, changed, unchanged,
removed, a failed earlier attempt) is one small table test. The apply step (``pipeline.py``) does
what the plan says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    add: tuple[str, ...]  # on disk, not indexed
    replace: tuple[str, ...]  # indexed with another hash: re-chunk, and the old chunks are superseded
    unchanged: tuple[str, ...]  # same hash: no conversion, no embedding
    retire: tuple[str, ...]  # indexed, gone from disk: its chunks leave search (history kept)

    @property
    def work(self) -> tuple[str, ...]:
        return self.add + self.replace

    def is_empty(self) -> bool:
        return not (self.add or self.replace or self.retire)


def plan(on_disk: Mapping[str, str], indexed: Mapping[str, str], *, retire_missing: bool = True) -> Plan:
    """``on_disk`` and ``indexed`` map a source to its content hash. ``indexed`` must hold only the sources
    this run is responsible for (same collection, under the roots walked), or unrelated ones get retired."""
    add = tuple(sorted(source for source in on_disk if source not in indexed))
    replace = tuple(sorted(s for s, digest in on_disk.items() if s in indexed and indexed[s] != digest))
    unchanged = tuple(sorted(s for s, digest in on_disk.items() if indexed.get(s) == digest))
    retire = tuple(sorted(s for s in indexed if s not in on_disk)) if retire_missing else ()
    return Plan(add=add, replace=replace, unchanged=unchanged, retire=retire)
