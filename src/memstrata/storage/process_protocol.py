"""What process memory reads from a store (``store.process``). Writes travel in the WriteBatch with the
index units they belong to, so a step and its searchable unit are stored together or not at all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memstrata.records.process import Artifact, Hypothesis, Step, Strategy, Task, TaskQuery
from memstrata.types import AdminScope, MemoryItem, Scope


class ProcessStore(Protocol):
    """Every read takes a Scope and applies it inside its own query, on every table it touches."""

    def tasks(self, query: TaskQuery) -> list[Task]: ...

    def steps(
        self, scope: Scope, *, task_ids: Sequence[str] | None = None, step_ids: Sequence[str] | None = None
    ) -> list[Step]:
        """Steps of the given tasks and/or with the given ids, in the order they were recorded."""
        ...

    def hypotheses(
        self, scope: Scope, *, task_ids: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Hypothesis]: ...

    def artifacts(
        self, scope: Scope, *, task_ids: Sequence[str] | None = None, ids: Sequence[str] | None = None
    ) -> list[Artifact]: ...

    def strategies(
        self,
        scope: Scope,
        *,
        ids: Sequence[str] | None = None,
        task_types: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[Strategy]:
        """Most confident first."""
        ...

    def useful_paths(self, scope: Scope, task_ids: Sequence[str]) -> dict[str, list[Step]]:
        """Per task, the steps of its tree that worked: succeeded, not dead ends, and every ancestor likewise
        (a walk down from the top-level steps in SQL). Tasks with no such step are left out."""
        ...

    def succeeded_siblings(self, scope: Scope, step_ids: Sequence[str]) -> list[tuple[str, Step]]:
        """(step id, sibling) for every sibling of the given steps (same task, same parent) that succeeded
        and was not a dead end."""
        ...

    def unindexed(self, scope: Scope, embedding_id: str, limit: int) -> list[MemoryItem]:
        """Index units of process records (active or archived) still without a vector of ``embedding_id``:
        recording a step defers its embedding to here."""
        ...

    def counts(self, scope: AdminScope | None) -> dict[str, int]:
        """Rows per process table (for stats)."""
        ...
