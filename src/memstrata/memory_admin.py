"""Whole-store operations of the facade: purge, reset, stats, reindex, export and import."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memstrata.errors import (
    ConfirmationRequiredError,
    NotFoundError,
)
from memstrata.memory_base import MemoryBase
from memstrata.providers.protocol import embedding_identity
from memstrata.storage.protocol import StoreStats
from memstrata.transfer import export_jsonl, import_jsonl


class AdminMixin(MemoryBase):
    def purge(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
    ) -> None:
        """Hard delete one memory: its row, vector, keyword entry and history are removed."""
        scope = self._scope(user_id, agent_id, session_id)
        if self.store.purge(scope, [memory_id]) == 0:
            raise NotFoundError(f"no memory {memory_id} in scope {scope.label()}")

    def reset(self, *, confirm: bool = False) -> None:
        """Remove everything in the store, every scope. Needs ``confirm=True``."""
        if not confirm:
            raise ConfirmationRequiredError(
                "reset() deletes every memory, message and history row of every user; call reset(confirm=True)"
            )
        self.store.reset()

    # --- read ---------------------------------------------------------------------------

    def stats(
        self, *, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None
    ) -> StoreStats:
        return self.store.stats(self._optional_scope(user_id, agent_id, session_id))

    # --- maintenance --------------------------------------------------------------------
    def reindex(self, *, batch_size: int = 256) -> Iterator[int]:
        """Embed every memory lacking a vector of the configured model; yields progress counts.

        Switching models first points the store at the new identity, so new writes use it and
        an interrupted reindex resumes where it stopped.
        """
        identity = embedding_identity(self.embedder)
        if self.store.embedding_id() != identity:
            self.store.set_embedding_id(identity)
        for batch in self.store.memories_needing_vectors(identity, batch_size):
            self.store.write(self._vector_batch(batch))
            yield len(batch)

    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory, vector, history event and raw turn to a JSONL file. Returns lines."""
        return export_jsonl(self.store, Path(path))

    def import_jsonl(self, path: str | Path) -> int:
        """Load an export into this store in one transaction. Returns the number of memories."""
        return import_jsonl(self.store, Path(path), self._embed, self._identity())
