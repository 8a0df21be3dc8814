"""The derived index: note sections as memories (kind ``note``) in the caller's store, and the step
that applies a sync plan to it in batches, each one all-or-nothing.

An edited note keeps the memory of every section whose heading path survived: its text is replaced
(re-embedded, with an UPDATE history event holding the old text), so usage counts and history stay
with the section. Sections that disappeared are soft-deleted (history keeps their text); a moved
note's sections follow it to the new path. Vectors come through the embedding cache, so rebuilding
the index from the files costs no model time for text it has seen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstrata.providers.cache import embed_with_cache
from memstrata.providers.protocol import Embedder, embedding_identity
from memstrata.query import Filters, ListQuery
from memstrata.records.history import history_event
from memstrata.storage.protocol import StatusChange, Store, WriteBatch
from memstrata.types import HistoryAction, HistoryEvent, MemoryItem, MemoryStatus, Provenance, Scope
from memstrata.vault.layout import VaultLayout, checksum, version_of
from memstrata.vault.markdown import parse_note
from memstrata.vault.plan import Plan
from memstrata.vault.units import Unit, note_units
from memstrata.write.ingest import new_memory

KIND = "note"
LIVE = (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)
Progress = Callable[[int, int], None]


@dataclass
class IndexedNote:
    path: str
    checksum: str
    sections: list[MemoryItem] = field(default_factory=list)


def scan(store: Store, scope: Scope, filters: Filters) -> Iterator[MemoryItem]:
    """Every memory matching ``filters`` owned by exactly ``scope``, a page at a time."""
    offset = 0
    while page := store.list_memories(
        ListQuery(scope=scope, filters=filters, limit=5000, offset=offset, order_by="created_at", descending=False)
    ):
        offset += len(page)
        # Reads match broader scopes too; the index is exactly the owner's rows.
        yield from (item for item in page if item.scope == scope)


def read_index(
    store: Store,
    scope: Scope,
    vault: str,
    paths: Iterable[str] | None = None,
    *,
    statuses: Sequence[MemoryStatus] = LIVE,
) -> dict[str, IndexedNote]:
    """The indexed notes of a vault (all, or only ``paths``), each with its sections in reading order."""
    filters = [
        Filters(kind=(KIND,), status=tuple(statuses), metadata={"vault": vault, **({"path": p} if p else {})})
        for p in (paths if paths is not None else [None])
    ]
    notes: dict[str, IndexedNote] = {}
    for query in filters:
        for item in scan(store, scope, query):
            path = str(item.metadata.get("path"))
            note = notes.setdefault(path, IndexedNote(path, str(item.metadata.get("checksum"))))
            note.sections.append(item)
    for note in notes.values():
        note.sections.sort(key=lambda item: int(item.metadata.get("ordinal", 0)))
    return notes


def disk_state(layout: VaultLayout, paths: Iterable[str] | None = None) -> dict[str, str]:
    """``{path: checksum}`` of the notes on disk (all, or those of ``paths`` that still exist)."""
    if paths is None:
        return {path: checksum(absolute.read_bytes()) for path, absolute in layout.walk()}
    found: dict[str, str] = {}
    for path in paths:
        absolute = layout.root / path
        if absolute.is_file() and layout.is_note(absolute):
            found[path] = checksum(absolute.read_bytes())
    return found


@dataclass
class Counts:
    sections_added: int = 0
    sections_updated: int = 0
    sections_deleted: int = 0
    embedded: int = 0
    warnings: list[str] = field(default_factory=list)


@dataclass
class _Batch:
    inserts: list[MemoryItem] = field(default_factory=list)
    replacements: list[tuple[MemoryItem, datetime]] = field(default_factory=list)
    deletions: list[MemoryItem] = field(default_factory=list)
    history: list[HistoryEvent] = field(default_factory=list)
    to_embed: list[MemoryItem] = field(default_factory=list)


@dataclass(frozen=True)
class Indexer:
    store: Store
    embedder: Embedder
    layout: VaultLayout
    scope: Scope
    vault: str
    clock: Callable[[], datetime]
    batch_notes: int = 64
    max_section_chars: int = 2000
    max_note_bytes: int = 2_000_000

    def apply(
        self, plan: Plan, index: dict[str, IndexedNote], *, actor: str, reason: str, progress: Progress | None = None
    ) -> Counts:
        """Write the plan to the store, ``batch_notes`` notes per transaction (a failure keeps earlier batches)."""
        counts = Counts()
        work: list[tuple[str, IndexedNote | None, str | None]] = [(p, None, None) for p in plan.new]
        work += [(p, index[p], None) for p in plan.edited]
        work += [(m.target, index[m.source], m.source) for m in plan.moved]
        work += [(p, index[p], "-") for p in plan.deleted]  # "-": the note is gone
        for start in range(0, len(work), self.batch_notes):
            batch = _Batch()
            for path, old, moved_from in work[start : start + self.batch_notes]:
                if moved_from == "-":
                    assert old is not None
                    self._delete(batch, old.sections, actor, f"{reason}: {path} is no longer in the vault")
                else:
                    self._reindex(batch, path, old, moved_from, actor, reason, counts)
            self._write(batch, counts)
            if progress is not None:
                progress(min(start + self.batch_notes, len(work)), len(work))
        return counts

    # --- one note ----------------------------------------------------------------------------
    def _reindex(
        self,
        batch: _Batch,
        path: str,
        old: IndexedNote | None,
        moved_from: str | None,
        actor: str,
        reason: str,
        counts: Counts,
    ) -> None:
        absolute = self.layout.root / path
        try:
            data = absolute.read_bytes()
        except FileNotFoundError:  # gone between planning and now: the next sync sees it as deleted
            counts.warnings.append(f"{path} disappeared while syncing; sync again")
            return
        if len(data) > self.max_note_bytes:
            counts.warnings.append(f"{path} is {len(data)} bytes, over vault.max_note_bytes; not indexed")
            return
        if looks_binary(data):
            counts.warnings.append(f"{path} looks like a binary file (an image or archive named .md?); not indexed")
            return
        text = data.decode("utf-8", errors="replace").replace("\x00", "")
        if "\ufffd" in text and b"\xef\xbf\xbd" not in data:
            counts.warnings.append(f"{path} is not valid UTF-8; undecodable bytes were replaced")
        note = parse_note(text, path)
        if note.frontmatter_error:
            counts.warnings.append(f"{path}: {note.frontmatter_error}; indexed with the frontmatter as text")
        digest = checksum(data)
        units = note_units(note, path, digest, self.vault, self.max_section_chars)
        details = {"path": path, "version": version_of(digest)} | ({"moved_from": moved_from} if moved_from else {})
        why = f"{reason}: moved from {moved_from}" if moved_from else reason
        now = self.clock()
        previous = {str(item.metadata.get("section")): item for item in (old.sections if old else [])}
        for unit in units:
            existing = previous.pop(unit.key, None)
            if existing is None:
                self._insert(batch, unit, path, now, actor, why, details)
            else:
                self._replace(batch, existing, unit, path, now, actor, why, details, moved=moved_from is not None)
        self._delete(batch, list(previous.values()), actor, f"{why}: the section is no longer in the note")

    def _insert(
        self, batch: _Batch, unit: Unit, path: str, now: datetime, actor: str, reason: str, details: dict[str, str]
    ) -> None:
        item = new_memory(
            self.scope, unit.text, now=now, kind=KIND, metadata=unit.metadata, provenance=self._provenance(path, unit)
        )
        batch.inserts.append(item)
        batch.to_embed.append(item)
        batch.history.append(history_event(item, HistoryAction.ADD, at=now, actor=actor, reason=reason,
                                           details=details | {"section": unit.key}))  # fmt: skip

    def _replace(
        self,
        batch: _Batch,
        old: MemoryItem,
        unit: Unit,
        path: str,
        now: datetime,
        actor: str,
        reason: str,
        details: dict[str, str],
        *,
        moved: bool,
    ) -> None:
        provenance = self._provenance(path, unit)
        if old.text == unit.text and old.metadata == unit.metadata and old.provenance == provenance:
            return
        status = MemoryStatus.ACTIVE if old.text != unit.text else old.status  # an edited note is in use again
        new = old.model_copy(
            update={"text": unit.text, "metadata": unit.metadata, "provenance": provenance, "updated_at": now,
                    "status": status}
        )  # fmt: skip
        batch.replacements.append((new, old.updated_at))
        if old.text != unit.text:
            batch.to_embed.append(new)
        if old.text != unit.text or moved:  # a shifted span or checksum alone is bookkeeping, not a change
            batch.history.append(
                history_event(new, HistoryAction.UPDATE, at=now, actor=actor, old_text=old.text, reason=reason,
                              details=details | {"section": unit.key})
            )  # fmt: skip

    def _delete(self, batch: _Batch, items: list[MemoryItem], actor: str, reason: str) -> None:
        now = self.clock()
        for item in items:
            batch.deletions.append(item)
            details = {"path": str(item.metadata.get("path")), "section": str(item.metadata.get("section"))}
            batch.history.append(
                history_event(item, HistoryAction.DELETE, at=now, actor=actor, reason=reason, details=details)
            )

    def _provenance(self, path: str, unit: Unit) -> Provenance:
        return Provenance(source="document", document=path, span=unit.span)

    def _write(self, batch: _Batch, counts: Counts) -> None:
        if not (batch.inserts or batch.replacements or batch.deletions):
            return
        texts = [item.text for item in batch.to_embed]
        embedded = embed_with_cache(self.embedder, self.store, texts, self.scope.tenant_id)
        now = self.clock()
        self.store.write(
            WriteBatch(
                inserts=batch.inserts,
                replacements=batch.replacements,
                status_changes=[StatusChange(i.id, i.scope, MemoryStatus.DELETED, now) for i in batch.deletions],
                history=batch.history,
                vectors=[(item.id, vector) for item, vector in zip(batch.to_embed, embedded.vectors, strict=True)],
                embedding_id=embedding_identity(self.embedder),
                cache_entries=embedded.new_cache_entries,
            )
        )
        counts.sections_added += len(batch.inserts)
        counts.sections_updated += len(batch.replacements)
        counts.sections_deleted += len(batch.deletions)
        counts.embedded += len(embedded.new_cache_entries)


def drop_index(store: Store, scope: Scope, vault: str) -> int:
    """Purge every indexed section of the vault (any status) with its vectors and history: the files stay."""
    statuses = tuple(MemoryStatus)
    ids = [item.id for note in read_index(store, scope, vault, statuses=statuses).values() for item in note.sections]
    for start in range(0, len(ids), 500):
        store.purge(scope, ids[start : start + 500], keep_embeddings=True)  # the files still hold the texts
    return len(ids)


def looks_binary(data: bytes) -> bool:
    """A file no one wrote as text: a NUL byte near the start (as git decides), or mostly bytes that are not
    UTF-8. A few bad bytes in a real note still index, with a warning."""
    if b"\x00" in data[:8000]:
        return True
    head = data[:8000].decode("utf-8", errors="replace")
    return bool(head) and head.count("\ufffd") > len(head) * 0.3
