"""``memory.admin``: whole-store and whole-user operations: stats, purge, reset, reindex, export and
import, and erasure with proof."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

from memstrata.errors import ConfirmationRequiredError, NotFoundError, StoreError
from memstrata.export import ImportReport, export_jsonl, import_jsonl
from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.providers.protocol import embedding_identity
from memstrata.storage.protocol import StoreStats
from memstrata.types import MemoryItem
from memstrata.validation import check_count, clean_id


@dataclass(frozen=True)
class ErasureReport:
    deleted: dict[str, int]  # rows removed per table
    remaining: dict[str, int]  # rows per table still about the user afterwards: all zero


class AdminAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def stats(self, **scope: Unpack[ScopeArgs]) -> StoreStats:
        return self._core.store.stats(self._binding.optional_scope(scope))

    def purge(self, memory_id: str, **scope: Unpack[ScopeArgs]) -> None:
        """Hard delete one memory: its row, vector, keyword entry and history are removed."""
        resolved = self._binding.scope(scope)
        memory_id = clean_id(memory_id)
        if self._core.store.purge(resolved, [memory_id]) == 0:
            raise NotFoundError(f"no memory {memory_id} in scope {resolved.label()}")

    def reset(self, *, confirm: bool = False) -> None:
        """Remove everything in the store, every scope. Needs ``confirm=True``."""
        if not confirm:
            raise ConfirmationRequiredError(
                "reset() deletes every memory, message and history row of every user; call reset(confirm=True)"
            )
        self._core.store.reset()

    def erase_user(self, user_id: str, *, confirm: bool = False) -> ErasureReport:
        """Remove everything about a user (memories, raw turns, history, vectors, jobs, graph, cached embeddings)
        and prove that nothing remains. Irreversible: needs ``confirm=True``."""
        if not confirm:
            raise ConfirmationRequiredError(
                f"erase_user removes every memory, raw turn and history row of {user_id!r} for good; "
                "call erase_user(user_id, confirm=True)"
            )
        scope = self._binding.scope({"user_id": user_id})
        deleted = self._core.store.erase_scope(scope)
        remaining = self._core.store.count_scope_rows(scope)
        if any(remaining.values()):
            raise StoreError(f"erasure of {user_id!r} left rows behind: {remaining}; run erase_user again")
        return ErasureReport(deleted=deleted, remaining=remaining)

    def reindex(self, *, batch_size: int = 256) -> Iterator[int]:
        """Embed every memory lacking a vector of the configured model; yields progress counts.

        Switching models first points the store at the new identity, so new writes use it and
        an interrupted reindex resumes where it stopped.
        """
        check_count(batch_size, "batch_size", 1, 100_000)
        store = self._core.store
        identity = embedding_identity(self._core.embedder)
        if store.embedding_id() != identity:
            store.set_embedding_id(identity)
        for batch in store.memories_needing_vectors(identity, batch_size):
            store.write(self._core.vector_batch(batch))
            yield len(batch)

    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory, vector, history event and raw turn to a JSONL file. Returns lines."""
        return export_jsonl(self._core.store, Path(path))

    def import_jsonl(self, path: str | Path) -> ImportReport:
        """Load an export into this store in one transaction. Records the store already holds are skipped, so
        importing into the store the export came from merges; a memory changed since the export keeps its
        stored version."""
        return import_jsonl(self._core.store, Path(path), self._embed, self._core.identity())

    def _embed(self, items: list[MemoryItem]) -> list[tuple[str, object]]:
        return list(self._core.vector_batch(items).vectors)
