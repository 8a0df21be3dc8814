"""``memory.vault``: the Markdown vault as callers see it (Python, CLI, REST, MCP).

Files are the truth: reads render what is on disk now; the index (note sections as ``note``
memories in the same store) is derived, rebuilt from the files at any time, and kept current by
``sync`` (offline), the file watcher (while the service runs) and every agent write. A vault belongs
to one scope (``vault.user_id`` / ``vault.agent_id`` / ``vault.tenant_id``): a caller whose scope
does not contain it is told there is no vault.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, get_args

from memstrata.errors import ConfirmationRequiredError, InvalidInputError, MemstrataError, NotFoundError, ProviderError
from memstrata.query import Filters
from memstrata.sentences import cut_to_budget, estimate_tokens
from memstrata.types import HistoryEvent, MemoryStatus, Scope
from memstrata.validation import check_count
from memstrata.vault import writes
from memstrata.vault.context import SURVEY_DETAIL, Piece, assemble, hit_piece, note_piece
from memstrata.vault.example import init_vault
from memstrata.vault.index import KIND, IndexedNote, Indexer, disk_state, drop_index, read_index, scan
from memstrata.vault.layout import Layer, VaultLayout, checksum, domain_of, layer_of, resolve_file, version_of
from memstrata.vault.lock import vault_lock
from memstrata.vault.markdown import Note, parse_note
from memstrata.vault.models import (
    DomainContext,
    DomainSummary,
    ForgetCandidate,
    InitReport,
    NoteRef,
    NoteSummary,
    NoteView,
    RulesBlock,
    SyncReport,
    VaultHit,
)
from memstrata.vault.plan import Plan, plan, restricted
from memstrata.vault.progressive import fit, render
from memstrata.vault.rules import load_rules
from memstrata.vault.settings import VaultSettings, vault_settings_of
from memstrata.vault.usage import forgetting_report, lifted, matches, summary
from memstrata.vault.writes import Written

if TYPE_CHECKING:
    from memstrata.memory import Memory

CONTEXT_ORDER = ("basic_info.md", "taxonomy.md", "main_challenge.md", "network.md")


class Vault:
    def __init__(self, memory: Memory, settings: VaultSettings) -> None:
        self.settings = settings
        self._memory = memory
        self._owner = settings.owner()
        # The facade's scope builder carries the tenant of a ``for_tenant`` view: the vault is that tenant's or none.
        if memory.resolve_scope(user_id=self._owner.user_id, agent_id=self._owner.agent_id) != self._owner:
            raise NotFoundError("no vault for this tenant; the vault belongs to vault.tenant_id's keys")

    @classmethod
    def of(cls, memory: Memory) -> Vault:
        return cls(memory, vault_settings_of(memory.settings))

    def at(self, *, user_id: str | None = None, agent_id: str | None = None, session_id: str | None = None) -> Vault:
        """This vault for a caller's scope: allowed when the scope contains the vault's (as any read is)."""
        if user_id or agent_id or session_id:
            caller = self._memory.resolve_scope(user_id=user_id, agent_id=agent_id, session_id=session_id)
            if not caller.contains(self._owner):
                shared = self._owner.user_id is None and caller.user_id is not None
                raise NotFoundError(
                    f"no vault in scope {caller.label()}; this vault belongs to {self._owner.label()} "
                    "(vault.user_id / vault.agent_id in the configuration)"
                    + (
                        ": it is no user's, so a call for a user (a key limited to users, `memstrata mcp --user`) "
                        "does not reach it; use a key for the whole tenant, or set vault.user_id to serve it to "
                        "that user"
                        if shared
                        else ""
                    )
                )
        return self

    @property
    def owner(self) -> Scope:
        return self._owner

    @property
    def layout(self) -> VaultLayout:
        root = self.settings.root()
        rules = tuple(resolve_file(root, name) for name in self.settings.rules_files)
        return VaultLayout(root, self.settings.rules_dir, rules)

    def _indexer(self) -> Indexer:
        s = self.settings
        return Indexer(self._memory.store, self._memory.embedder, self.layout, self._owner, s.name,
                       self._memory.now, s.batch_notes, s.max_section_chars, s.max_note_bytes)  # fmt: skip

    # --- sync -------------------------------------------------------------------------------
    def init(self, *, example: bool = False) -> InitReport:
        """Create the vault folder and its rules folder; ``example`` adds a small bilingual domain."""
        root = self.settings.root()
        return InitReport(root=str(root), created=tuple(init_vault(root, self.settings.rules_dir, example=example)))

    def sync(self, *, confirm_deletions: bool = False, progress: Any = None, actor: str = "vault-sync") -> SyncReport:
        """Bring the index in line with the files: new, edited, moved and deleted notes, in batches."""
        started = time.perf_counter()
        layout = self.layout
        with vault_lock(layout.root):
            index = read_index(self._memory.store, self._owner, self.settings.name)
            todo = plan(disk_state(layout), {path: note.checksum for path, note in index.items()})
            self._guard(todo, len(index), confirm_deletions)
            return self._apply(todo, index, actor, "vault sync", progress, started)

    def sync_paths(
        self, paths: Iterable[str], *, actor: str = "vault-watch", reason: str = "edited on disk"
    ) -> SyncReport:
        """Sync only these notes (a watcher's batch, a write's note); a rename within them is a move."""
        started = time.perf_counter()
        layout = self.layout
        wanted = set(paths)
        with vault_lock(layout.root):
            index = read_index(self._memory.store, self._owner, self.settings.name, sorted(wanted))
            todo = restricted(disk_state(layout, sorted(wanted)), {p: n.checksum for p, n in index.items()}, wanted)
            return self._apply(todo, index, actor, reason, None, started)

    def _guard(self, todo: Plan, indexed: int, confirmed: bool) -> None:
        """Nothing is deleted without confirmation: a sync that would drop many notes (an unmounted drive, a
        wrong vault.path) stops and asks."""
        gone = len(todo.deleted)
        if not confirmed and gone > 3 and gone > self.settings.delete_guard * indexed:
            raise ConfirmationRequiredError(
                f"sync would remove {gone} of {indexed} indexed notes from the index ({todo.summary()}); if those "
                f"files are meant to be gone from {self.layout.root}, sync again with confirm_deletions "
                "(`memstrata vault sync --confirm-deletions`)"
            )

    def _apply(
        self, todo: Plan, index: dict[str, IndexedNote], actor: str, reason: str, progress: Any, started: float
    ) -> SyncReport:
        counts = self._indexer().apply(todo, index, actor=actor, reason=reason, progress=progress)
        return SyncReport(
            new=len(todo.new), edited=len(todo.edited), moved=len(todo.moved), deleted=len(todo.deleted),
            unchanged=len(todo.unchanged), sections_added=counts.sections_added,
            sections_updated=counts.sections_updated, sections_deleted=counts.sections_deleted,
            embedded=counts.embedded, seconds=round(time.perf_counter() - started, 3), warnings=tuple(counts.warnings),
        )  # fmt: skip

    def drop_index(self, *, confirm: bool = False) -> int:
        """Purge the vault's index (sections, vectors, their history). The files are untouched."""
        if not confirm:
            raise ConfirmationRequiredError("drop_index purges the vault's index and its history; pass confirm=True")
        with vault_lock(self.layout.root):
            return drop_index(self._memory.store, self._owner, self.settings.name)

    def rebuild(self, *, confirm: bool = False, progress: Any = None) -> SyncReport:
        """Drop the index and build it again from the files (the embedding cache makes it cheap)."""
        self.drop_index(confirm=confirm)
        return self.sync(progress=progress, actor="vault-rebuild")

    # --- reading ----------------------------------------------------------------------------
    def _note(self, path: str) -> tuple[str, Note, str]:
        shown, absolute = self.layout.note_path(path)
        try:
            data = absolute.read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"no note {shown} in the vault; `memstrata vault notes` lists them") from None
        return shown, parse_note(data.decode("utf-8", errors="replace"), shown), version_of(checksum(data))

    def show(
        self,
        path: str,
        *,
        depth: int = 6,
        sentences: int | None = None,
        budget_tokens: int | None = None,
        heading: str | None = None,
        record_use: bool = True,
    ) -> NoteView:
        """A note from disk, progressively: headings to ``depth``, ``sentences`` per section, within the budget."""
        if budget_tokens is not None:
            check_count(budget_tokens, "budget_tokens", 1, 10_000_000)
        shown, note, version = self._note(path)
        if heading is None:
            rendered = fit(note, budget_tokens, depth, sentences)
        else:
            rendered = render(note, depth, sentences, heading=heading)
            if budget_tokens is not None and rendered.tokens > budget_tokens:
                text = cut_to_budget(rendered.text, budget_tokens)
                rendered = type(rendered)(text, estimate_tokens(text), depth, sentences, True)
        if record_use:
            self._record_use([shown])
        return NoteView(
            path=shown, version=version, title=note.title, domain=domain_of(shown), layer=layer_of(shown),
            frontmatter=note.frontmatter, text=rendered.text, tokens=rendered.tokens, depth=rendered.depth,
            sentences=rendered.sentences, truncated=rendered.truncated,
            outline=tuple(s.key for s in note.sections if s.level),
        )  # fmt: skip

    def _record_use(self, paths: list[str]) -> None:
        index = read_index(self._memory.store, self._owner, self.settings.name, paths)
        ids = [item.id for note in index.values() for item in note.sections]
        if ids:
            self._memory.store.record_access(self._owner, ids, self._memory.now())

    def search(
        self,
        query: str,
        *,
        domain: str | None = None,
        category: str | None = None,
        concept: str | None = None,
        tag: str | None = None,
        layer: str | None = None,
        limit: int = 10,
    ) -> list[VaultHit]:
        """Hybrid search over note sections; category / concept / tag come from the notes' frontmatter
        (the taxonomy's coordinates). Notes used often rank a little higher among near-equals."""
        if layer is not None and layer not in get_args(Layer):
            raise InvalidInputError(f"layer {layer!r} is not a vault layer; use one of {', '.join(get_args(Layer))}")
        metadata: dict[str, str | int | float | bool | None] = {"vault": self.settings.name}
        if domain is not None:
            metadata["domain"] = domain
        if layer is not None:
            metadata["layer"] = layer
        narrowing = category is not None or concept is not None or tag is not None
        pool = min(1000, limit * (20 if narrowing else 3))  # room for the taxonomy filter and the usage lift
        hits = self._memory.search(
            query, user_id=self._owner.user_id, agent_id=self._owner.agent_id, limit=pool,
            filters={"kind": [KIND], "metadata": metadata}, record_access=False, lifecycle=False,
            understand_time=False, graph=False,
        )  # fmt: skip
        found: list[VaultHit] = []
        for hit in hits:
            meta = hit.memory.metadata
            if not matches(meta, category=category, concept=concept, tag=tag, layer=None):
                continue
            found.append(
                VaultHit(
                    path=str(meta["path"]), domain=str(meta.get("domain", "")), title=str(meta.get("title", "")),
                    heading=str(meta.get("heading", "")), layer=meta.get("layer", "atomic"), text=hit.text,
                    score=round(lifted(hit.score, hit.memory.access_count, self.settings.usage_weight), 6),
                    uses=hit.memory.access_count, version=version_of(str(meta.get("checksum", ""))),
                    memory_id=hit.id, span=hit.memory.provenance.span,
                )
            )  # fmt: skip
        if not found and domain is not None:  # a typo in the domain looked like a vault without an answer
            self._known_domain(domain)
        found.sort(key=lambda h: (-h.score, h.path, h.heading))
        return found[:limit]

    def _known_domain(self, domain: str) -> None:
        names = [d.name for d in self.domains()]
        if domain not in names:
            known = ", ".join(names) or "none yet (`memstrata vault sync`)"
            raise NotFoundError(f"no domain {domain!r} in the vault index; domains: {known}")

    def _heads(self, domain: str | None = None) -> list[IndexedNote]:
        """One row per indexed note (its first section): what catalogs and summaries need."""
        metadata: dict[str, str | int | float | bool | None] = {"vault": self.settings.name, "ordinal": 0}
        if domain is not None:
            metadata["domain"] = domain
        filters = Filters(kind=(KIND,), status=(MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED), metadata=metadata)
        items = scan(self._memory.store, self._owner, filters)
        return [IndexedNote(str(i.metadata["path"]), str(i.metadata.get("checksum")), [i]) for i in items]

    def notes(
        self,
        *,
        domain: str | None = None,
        category: str | None = None,
        concept: str | None = None,
        tag: str | None = None,
        layer: str | None = None,
    ) -> list[NoteSummary]:
        """The catalog: indexed notes (by path), narrowed by domain and the taxonomy's category / concept / tag."""
        heads = self._heads(domain)
        kept = [n for n in heads if matches(n.sections[0].metadata, category=category, concept=concept, tag=tag,
                                            layer=layer)]  # fmt: skip
        return sorted((summary(note) for note in kept), key=lambda s: s.path)

    def domains(self) -> list[DomainSummary]:
        grouped: dict[str, list[NoteSummary]] = {}
        for note in self._heads():
            found = summary(note)
            if found.domain:  # a note a person left at the root belongs to no domain (notes() still lists it)
                grouped.setdefault(found.domain, []).append(found)
        return [
            DomainSummary(name=name, notes=len(notes), layers=_count(n.layer for n in notes),
                          categories=_count(n.category for n in notes if n.category))
            for name, notes in sorted(grouped.items())
        ]  # fmt: skip

    def context(
        self, domain: str, *, budget_tokens: int = 2000, query: str | None = None, atomic_limit: int = 5
    ) -> DomainContext:
        """The domain's memory for a prompt: basic → cognition (+ surveys, shallow) → alignment → atomic sections
        matching ``query``, each as detailed as the budget allows (see context.py)."""
        heads = {n.path: summary(n) for n in self._heads(domain)}
        if not heads:
            self._known_domain(domain)
        rank = {name: i for i, name in enumerate(CONTEXT_ORDER)}
        layer_files = sorted((p for p in heads if p.rsplit("/", 1)[-1].lower() in rank),
                             key=lambda p: (rank[p.rsplit("/", 1)[-1].lower()], p))  # fmt: skip
        surveys = sorted(p for p, s in heads.items() if s.layer == "atomic" and "survey" in {t.lower() for t in s.tags})
        alignment = sorted(p for p, s in heads.items() if s.layer == "alignment")
        pieces: list[Piece] = []
        for path in [*layer_files, *surveys, *alignment]:
            try:
                shown, note, _ = self._note(path)
            except NotFoundError:  # deleted since the last sync: skip it, the next sync drops it
                continue
            if path in surveys:
                pieces.append(note_piece(shown, "atomic", note, richest=SURVEY_DETAIL, need="survey"))
            else:
                pieces.append(note_piece(shown, heads[path].layer, note))
        if query:
            hits = self.search(query, domain=domain, layer="atomic", limit=2 * atomic_limit)
            found = [piece for hit in hits if (piece := hit_piece(hit)) is not None]  # a survey's matching section too
            pieces += found[:atomic_limit]
        return assemble(domain, pieces, budget_tokens)

    def history(self, path: str) -> list[HistoryEvent]:
        """Every change to a note's sections (ADD / UPDATE / DELETE, who and why), oldest first."""
        shown, _ = self.layout.note_path(path)
        index = read_index(self._memory.store, self._owner, self.settings.name, [shown], statuses=tuple(MemoryStatus))
        events = [e for note in index.values() for item in note.sections
                  for e in self._memory.store.history(self._owner, item.id)]  # fmt: skip
        if not events:
            raise NotFoundError(f"no history for {shown}: it was never indexed (sync first?)")
        return sorted(events, key=lambda e: (e.created_at, e.id))

    def forgetting(
        self, *, min_idle_days: float = 30.0, limit: int = 20, domain: str | None = None
    ) -> list[ForgetCandidate]:
        """Atomic notes used least and idle longest: candidates to forget, for a person to confirm."""
        index = read_index(self._memory.store, self._owner, self.settings.name)
        notes = [n for n in index.values() if domain is None or n.sections[0].metadata.get("domain") == domain]
        return forgetting_report(notes, self._memory.now(), min_idle_days=min_idle_days, limit=limit)

    def rules(self, agent_id: str | None = None, *, every_agent: bool = False) -> RulesBlock:
        """The rules layer, verbatim and in a stable order: shared rules, then ``agent_id``'s own. ``every_agent``:
        the rules of every agent, for a person to review (each file says whom it applies to)."""
        if every_agent and agent_id is not None:
            raise InvalidInputError("pass agent_id (the rules that agent reads) or every_agent, not both")
        # read as scope ids are (" coder " is coder). An id that is no folder name ("team/coder", "..") has no rules
        # of its own, and is not refused: context() passes every agent's id here.
        agent_id = agent_id.strip() if agent_id is not None else None
        root = self.settings.root() if self.settings.path else None
        return load_rules(root, self.settings.rules_dir, self.settings.rules_files, agent_id, every_agent=every_agent)

    # --- writing ----------------------------------------------------------------------------
    def _written(self, done: Written, actor: str, reason: str) -> NoteRef:
        paths = [done.path] if done.moved_from is None else [done.moved_from, done.path]
        try:
            self.sync_paths(paths, actor=actor, reason=reason)
        except MemstrataError as exc:
            raise ProviderError(
                f"{done.path} was written (version {done.version}) but indexing it failed ({exc}); "
                "`memstrata vault sync` indexes it once the cause is fixed"
            ) from exc
        self._record_use([done.path])
        return NoteRef(path=done.path, version=done.version)

    def _max_chars(self) -> int:
        return self._memory.settings.limits.max_text_chars

    def create(
        self, path: str, body: str, *, frontmatter: Mapping[str, Any] | None = None, actor: str = "api"
    ) -> NoteRef:
        """A new note (refused if the path exists). ``frontmatter``: tag, category, concept, source, dates..."""
        with vault_lock(self.layout.root):
            today = self._memory.now().date()
            done = writes.create(self.layout, path, body, frontmatter, max_chars=self._max_chars(), today=today)
            return self._written(done, actor, "note created")

    def append(self, path: str, text: str, *, version: str, heading: str | None = None, actor: str = "api") -> NoteRef:
        """Add text at the end of a section (or of the note); refused if the note is no longer at ``version``."""
        with vault_lock(self.layout.root):
            done = writes.append(self.layout, path, text, version, heading, max_chars=self._max_chars())
            return self._written(done, actor, f"appended to {heading or 'the note'}")

    def patch(self, path: str, heading: str, text: str, *, version: str, actor: str = "api") -> NoteRef:
        """Replace a section's own text; refused if the note is no longer at ``version``."""
        with vault_lock(self.layout.root):
            done = writes.patch(self.layout, path, heading, text, version, max_chars=self._max_chars())
            return self._written(done, actor, f"patched section {heading}")

    def move(self, path: str, new_path: str, *, version: str, actor: str = "api") -> NoteRef:
        """Rename a note; its index entries, usage counts and history follow it."""
        with vault_lock(self.layout.root):
            return self._written(writes.move(self.layout, path, new_path, version), actor, "note moved")

    def forget(self, path: str, *, version: str, confirm: bool = False, actor: str = "api") -> NoteRef:
        """Move a note to the vault's ``.trash`` folder and out of the index. Needs ``confirm=True``."""
        if not confirm:
            raise ConfirmationRequiredError(
                f"forget moves {path} to .trash/ and drops it from the index (the file stays there until a person "
                "empties the trash); call again with confirm=True"
            )
        with vault_lock(self.layout.root):
            done = writes.trash(self.layout, path, version, self._memory.now())
            self.sync_paths([path], actor=actor, reason=f"forgotten: moved to {done.path}")
            return NoteRef(path=done.path, version=done.version)


def _count(values: Iterable[str | None]) -> dict[str, int]:
    counted: dict[str, int] = {}
    for value in values:
        if value is not None:
            counted[value] = counted.get(value, 0) + 1
    return dict(sorted(counted.items()))
