"""``memory.admin``: whole-store and whole-user operations: stats, purge, reset, reindex, export and
import, and erasure with proof."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Unpack

from memstrata.errors import ConfirmationRequiredError, NotFoundError, StoreError
from memstrata.export import ImportReport, export_jsonl, import_jsonl
from memstrata.facade.core import MemoryCore
from memstrata.facade.scoping import ScopeArgs, ScopeBinding
from memstrata.providers.protocol import embedding_identity
from memstrata.query import Filters, ListQuery
from memstrata.storage.protocol import StoreStats
from memstrata.types import MemoryItem, MemoryStatus, Scope
from memstrata.validation import check_count, clean_id


@dataclass(frozen=True)
class ErasureReport:
    deleted: dict[str, int]  # rows removed per table
    # Rows per table about the user once the erase committed: zero, unless a writer added new ones since. The
    # erase itself refuses to commit while its own snapshot of the database still holds any.
    remaining: dict[str, int]
    checked_strings: int = 0  # the user's texts searched for in the database files afterwards
    traces: dict[str, list[str]] = field(default_factory=dict)  # where any was still found: always empty


# How many of the user's own texts the proof looks for, and how much of each: the database files are scanned
# once per string, so a short list of the most distinctive (longest) texts keeps erasure fast.
PROOF_STRINGS = 40
PROOF_CHARS = 120
# Erasures run back to back while the user's own rows written meanwhile still hold erased words (see erase_user).
ERASE_ROUNDS = 3


class AdminAPI:
    def __init__(self, core: MemoryCore, binding: ScopeBinding) -> None:
        self._core = core
        self._binding = binding

    def stats(self, **scope: Unpack[ScopeArgs]) -> StoreStats:
        return self._core.store.stats(self._binding.optional_scope(scope))

    def purge(self, memory_id: str, **scope: Unpack[ScopeArgs]) -> None:
        """Hard delete one memory: its row, vector, keyword entry and history are removed, and so are its
        earlier versions (the texts its edits replaced, kept for time travel: records/versions.py)."""
        resolved = self._binding.scope(scope)
        memory_id = clean_id(memory_id)
        if not self._core.store.get(resolved, [memory_id]):
            raise NotFoundError(f"no memory {memory_id} in scope {resolved.label()}")
        versions = self._core.kept_versions(resolved, [memory_id])
        self._core.store.purge(resolved, [memory_id, *(version.id for version in versions)])

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
        store = self._core.store
        scope = self._binding.scope({"user_id": user_id})
        needles = self._proof_strings(scope)
        deleted: dict[str, int] = {}
        for _ in range(ERASE_ROUNDS):
            for table, count in store.erase_scope(scope).items():
                deleted[table] = deleted.get(table, 0) + count
            others = store.texts_held(needles)  # the same words in another user's memories are theirs to keep
            kept = [needle for needle in needles if needle not in others]
            traces = store.find_traces(kept)
            # A writer for this user that read the erased turns before the erase committed wrote them into a new
            # row (a turn is indexed with the turns before it): that row is the user's too and goes as well.
            if not traces or not any(store.count_scope_rows(scope).values()):
                break
        if traces:  # freed pages may still hold old bytes: rewrite the database and look again
            store.compact()
            traces = store.find_traces(kept)
        if traces:
            raise StoreError(f"erasure of {user_id!r} left text in the database files ({sorted(traces)[:3]}...); "
                             "run erase_user again")  # fmt: skip
        remaining = store.count_scope_rows(scope)
        return ErasureReport(deleted=deleted, remaining=remaining, checked_strings=len(kept), traces=traces)

    def _proof_strings(self, scope: Scope) -> list[str]:
        """The user's most distinctive texts (every version of every memory, and raw turns)."""
        store = self._core.store
        every = Filters(status=tuple(MemoryStatus))
        texts = [item.text for item in store.list_memories(ListQuery(scope=scope, filters=every, limit=10_000))]
        texts += [stored.message.content for stored in store.messages(scope, limit=10_000)]
        distinct = sorted({text.strip()[:PROOF_CHARS] for text in texts if len(text.strip()) >= 8}, key=len)
        return distinct[-PROOF_STRINGS:]

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

    def rebuild_keyword_index(self, *, batch_size: int = 2000) -> Iterator[int]:
        """Derive every memory's keyword terms again when an earlier memstrata's tokenizer built them (stores
        up to 50,000 memories are rebuilt on open); yields rows done per batch, nothing when already current."""
        check_count(batch_size, "batch_size", 1, 100_000)
        if not self._core.store.keyword_index_current():
            yield from self._core.store.rebuild_keyword_index(batch_size)

    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory, vector, history event and raw turn to a JSONL file. Returns lines. A view exports
        its own records only (a tenant's view its tenant's, a user's view that user's)."""
        file_mode = self._core.settings.store.file_mode_bits()
        return export_jsonl(self._core.store, Path(path), file_mode=file_mode, within=self._within())

    def import_jsonl(self, path: str | Path) -> ImportReport:
        """Load an export into this store in one transaction. Records the store already holds are skipped, so
        importing into the store the export came from merges; a memory changed since the export keeps its
        stored version. A view imports records of its own scope only, and refuses a file holding others."""
        return import_jsonl(self._core.store, Path(path), self._embed, self._core.identity(), within=self._within())

    def _within(self) -> ScopeBinding | None:
        """The view's bounds; None for the whole store. A tenant's view exported every tenant, and imported records
        into the tenants they came from (found by two user trials)."""
        return None if self._binding.unbound else self._binding

    def _embed(self, items: list[MemoryItem]) -> list[tuple[str, object]]:
        return list(self._core.vector_batch(items).vectors)
