"""REST endpoints for the Markdown vault and the rules layer (``/v1/vault``).

Same pattern as ``routes.py``: the key's scopes are checked, then the vault is called. A key sees the
vault only when its scope contains the vault's own (``vault.user_id`` / ``vault.agent_id`` /
``vault.tenant_id``); otherwise every endpoint answers 404. Writes need the version the note had
when it was read (409 when it changed since); rules files refuse every write (422).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from pydantic import Field

from memstrata.api.models import ScopeBody
from memstrata.api.principal import AccessDenied
from memstrata.api.routes import ERRORS, Caller, CallerDep, ScopeDep
from memstrata.types import HistoryEvent
from memstrata.vault import (
    DomainContext,
    DomainSummary,
    ForgetCandidate,
    NoteRef,
    NoteSummary,
    NoteView,
    RulesBlock,
    SyncReport,
    Vault,
    VaultHit,
    VaultSettings,
)
from memstrata.vault.settings import vault_settings_of

router = APIRouter(prefix="/v1/vault", responses=ERRORS, tags=["vault"])
NotePath = Annotated[str, Query(min_length=1, max_length=1024, description="note path in the vault, e.g. ai/x.md")]
Version = Annotated[str, Field(min_length=8, max_length=64, description="the version the note had when you read it")]
PathField = Annotated[str, Field(min_length=1, max_length=1024, description="note path in the vault")]


def settings_of(request: Request) -> VaultSettings:
    """``app.state.vault_settings`` when the app sets it, else the ``[vault]`` section of the Memory's settings."""
    found = getattr(request.app.state, "vault_settings", None)
    return found if isinstance(found, VaultSettings) else vault_settings_of(request.app.state.memory.settings)


SettingsDep = Annotated[VaultSettings, Depends(settings_of)]


def vault_for(call: Caller, ids: ScopeBody, settings: VaultSettings) -> Vault:
    return Vault(call.memory, settings).at(**call.scope(ids))


class SyncRequest(ScopeBody):
    confirm_deletions: bool = Field(default=False, description="allow a sync that drops many notes from the index")


class VaultSearchRequest(ScopeBody):
    query: str = Field(min_length=1, max_length=4000)
    domain: str | None = None
    category: str | None = None
    concept: str | None = None
    tag: str | None = None
    layer: str | None = Field(default=None, description="basic, cognition, alignment or atomic")
    limit: int = Field(default=10, ge=1, le=100)


class CreateNoteRequest(ScopeBody):
    path: PathField
    body: str = Field(min_length=1, description="Markdown, headings and all")
    frontmatter: dict[str, Any] | None = Field(default=None, description="tag, category, concept, source, ...")


class AppendRequest(ScopeBody):
    path: PathField
    text: str = Field(min_length=1)
    version: Version
    heading: str | None = Field(default=None, description="section heading or path 'A > B'; the note's end if none")


class PatchRequest(ScopeBody):
    path: PathField
    heading: str = Field(min_length=1, description="section heading, or heading path 'A > B'")
    text: str = Field(description="the section's new text (its heading and subsections stay)")
    version: Version


class MoveRequest(ScopeBody):
    path: PathField
    new_path: PathField
    version: Version


class ForgetRequest(ScopeBody):
    path: PathField
    version: Version
    confirm: bool = Field(default=False, description="required: the note moves to .trash/ and leaves the index")


@router.post("/sync", response_model=SyncReport)
def sync(body: SyncRequest, call: CallerDep, settings: SettingsDep) -> SyncReport:
    """Bring the index in line with the files: new, edited, moved and deleted notes."""
    return vault_for(call, body, settings).sync(confirm_deletions=body.confirm_deletions, actor=call.actor)


@router.get("/domains", response_model=list[DomainSummary])
def domains(call: CallerDep, ids: ScopeDep, settings: SettingsDep) -> list[DomainSummary]:
    return vault_for(call, ids, settings).domains()


@router.get("/notes", response_model=list[NoteSummary])
def notes(
    call: CallerDep,
    ids: ScopeDep,
    settings: SettingsDep,
    domain: str | None = None,
    category: str | None = None,
    concept: str | None = None,
    tag: str | None = None,
    layer: str | None = None,
) -> list[NoteSummary]:
    """The catalog: notes by domain and by the taxonomy's category / concept / tag."""
    return vault_for(call, ids, settings).notes(domain=domain, category=category, concept=concept, tag=tag, layer=layer)


@router.get("/note", response_model=NoteView)
def show(
    path: NotePath,
    call: CallerDep,
    ids: ScopeDep,
    settings: SettingsDep,
    depth: Annotated[int, Query(ge=0, le=6)] = 6,
    sentences: Annotated[int | None, Query(ge=0, le=1000)] = None,
    budget_tokens: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
    heading: Annotated[str | None, Query(max_length=1024)] = None,
) -> NoteView:
    """A note read progressively: headings to ``depth``, the first ``sentences`` per section, within a budget."""
    vault = vault_for(call, ids, settings)
    return vault.show(path, depth=depth, sentences=sentences, budget_tokens=budget_tokens, heading=heading)


@router.get("/note/history", response_model=list[HistoryEvent])
def history(path: NotePath, call: CallerDep, ids: ScopeDep, settings: SettingsDep) -> list[HistoryEvent]:
    return vault_for(call, ids, settings).history(path)


@router.post("/search", response_model=list[VaultHit])
def search(body: VaultSearchRequest, call: CallerDep, settings: SettingsDep) -> list[VaultHit]:
    return vault_for(call, body, settings).search(
        body.query, domain=body.domain, category=body.category, concept=body.concept, tag=body.tag,
        layer=body.layer, limit=body.limit,
    )  # fmt: skip


@router.get("/context", response_model=DomainContext)
def context(
    domain: Annotated[str, Query(min_length=1, max_length=256)],
    call: CallerDep,
    ids: ScopeDep,
    settings: SettingsDep,
    budget_tokens: Annotated[int, Query(ge=16, le=1_000_000)] = 2000,
    query: Annotated[str | None, Query(max_length=4000)] = None,
) -> DomainContext:
    """A domain's memory for a prompt: basic → cognition → alignment → atomic sections matching ``query``."""
    return vault_for(call, ids, settings).context(domain, budget_tokens=budget_tokens, query=query)


@router.get("/rules", response_model=RulesBlock)
def rules(
    call: CallerDep,
    ids: ScopeDep,
    settings: SettingsDep,
    every_agent: Annotated[bool, Query(description="every agent's rules, each marked with its agent (review)")] = False,
) -> RulesBlock:
    """The rules layer, verbatim: rules for every agent, then those of ``agent_id``. Read-only. ``every_agent``:
    the rules of all agents, for a person reviewing them (not with ``agent_id``; not for an agent-limited key)."""
    scope = call.scope(ids)
    if every_agent and call.principal.agent_ids is not None:
        raise AccessDenied(f"this API key is limited to agent_id in {sorted(call.principal.agent_ids)}; it reads "
                           "those agents' rules (pass agent_id), not every agent's")  # fmt: skip
    return Vault(call.memory, settings).rules(scope["agent_id"], every_agent=every_agent)


@router.get("/forgetting", response_model=list[ForgetCandidate])
def forgetting(
    call: CallerDep,
    ids: ScopeDep,
    settings: SettingsDep,
    min_idle_days: Annotated[float, Query(ge=0)] = 30.0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 20,
    domain: str | None = None,
) -> list[ForgetCandidate]:
    """Atomic notes used least and idle longest: candidates a person may confirm forgetting."""
    return vault_for(call, ids, settings).forgetting(min_idle_days=min_idle_days, limit=limit, domain=domain)


@router.post("/notes", status_code=201, response_model=NoteRef)
def create(body: CreateNoteRequest, call: CallerDep, settings: SettingsDep) -> NoteRef:
    return vault_for(call, body, settings).create(body.path, body.body, frontmatter=body.frontmatter, actor=call.actor)


@router.post("/note/append", response_model=NoteRef)
def append(body: AppendRequest, call: CallerDep, settings: SettingsDep) -> NoteRef:
    vault = vault_for(call, body, settings)
    return vault.append(body.path, body.text, version=body.version, heading=body.heading, actor=call.actor)


@router.post("/note/patch", response_model=NoteRef)
def patch(body: PatchRequest, call: CallerDep, settings: SettingsDep) -> NoteRef:
    return vault_for(call, body, settings).patch(
        body.path, body.heading, body.text, version=body.version, actor=call.actor
    )


@router.post("/note/move", response_model=NoteRef)
def move(body: MoveRequest, call: CallerDep, settings: SettingsDep) -> NoteRef:
    return vault_for(call, body, settings).move(body.path, body.new_path, version=body.version, actor=call.actor)


@router.post("/note/forget", response_model=NoteRef)
def forget(body: ForgetRequest, call: CallerDep, settings: SettingsDep) -> NoteRef:
    """Move a note to the vault's .trash/ folder and out of the index; needs ``confirm``."""
    return vault_for(call, body, settings).forget(
        body.path, version=body.version, confirm=body.confirm, actor=call.actor
    )
