"""MCP tools for the Markdown vault: read a note progressively, search notes, write a note safely,
a domain's context, and the rules layer. Forgetting notes and syncing are left to people (CLI, REST).

Writes name the version the agent read; a note changed since (a person's edit) is refused, and the
agent is told to read it again. Rules files refuse every write."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from memstrata.errors import InvalidInputError
from memstrata.mcp_server.common import READ_ONLY, AgentId, Callers, SessionId, UserId, reported, writes
from memstrata.vault import DomainContext, NoteRef, NoteView, RulesBlock, Vault, VaultHit, VaultSettings
from memstrata.vault.settings import vault_settings_of

PathArg = Annotated[str, Field(min_length=1, max_length=1024, description="note path in the vault, e.g. ai/x.md")]


def register_vault_tools(server: MCPServer, callers: Callers, settings: VaultSettings | None = None) -> None:
    """``settings``: the vault's; by default the ``[vault]`` section of the Memory's settings."""
    chosen = settings or vault_settings_of(callers.memory.settings)

    def scoped(
        ctx: Context[Any, Any], user_id: str | None, agent_id: str | None, session_id: str | None
    ) -> tuple[Vault, str | None, str]:
        """The caller's view of the vault, the agent id its rules are for, and the actor for history."""
        view, scope, actor = callers.scoped(ctx, user_id, agent_id, session_id)
        return Vault(view, chosen).at(**scope), scope["agent_id"], actor

    def vault(ctx: Context[Any, Any], user_id: str | None, agent_id: str | None, session_id: str | None) -> Vault:
        return scoped(ctx, user_id, agent_id, session_id)[0]

    @server.tool(annotations=READ_ONLY)
    @reported
    def vault_read(
        ctx: Context[Any, Any],
        path: PathArg,
        depth: Annotated[int, Field(ge=0, le=6, description="heading levels to show: 1 = H1 only")] = 6,
        sentences: Annotated[int | None, Field(ge=0, description="first sentences per section; all if unset")] = None,
        budget_tokens: Annotated[int | None, Field(ge=1, description="shorten until it fits")] = None,
        heading: Annotated[str | None, Field(description="only this section (and those under it)")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> NoteView:
        """Read a note from the vault, progressively: start shallow (depth=2, sentences=1), then ask for a
        heading in full. Returns the note's ``version``: pass it to vault_write to change the note."""
        return vault(ctx, user_id, agent_id, session_id).show(
            path, depth=depth, sentences=sentences, budget_tokens=budget_tokens, heading=heading
        )

    @server.tool(annotations=READ_ONLY)
    @reported
    def vault_search(
        ctx: Context[Any, Any],
        query: Annotated[str, Field(min_length=1, description="what to look for, Chinese or English")],
        domain: Annotated[str | None, Field(description="only this domain (top-level folder)")] = None,
        category: Annotated[str | None, Field(description="a category from the domain's taxonomy.md")] = None,
        concept: Annotated[str | None, Field(description="a concept from the domain's taxonomy.md")] = None,
        tag: Annotated[str | None, Field(description="method, benchmark, survey, blog, or a user tag")] = None,
        limit: Annotated[int, Field(ge=1, le=50)] = 8,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> list[VaultHit]:
        """Search the vault's notes, a section per hit (path, heading, text, version)."""
        return vault(ctx, user_id, agent_id, session_id).search(
            query, domain=domain, category=category, concept=concept, tag=tag, limit=limit
        )

    @server.tool(annotations=writes("Write a vault note", destructive=False))
    @reported
    def vault_write(
        ctx: Context[Any, Any],
        mode: Annotated[
            Literal["create", "append", "patch", "move"],
            Field(description="create a note, append to a section, replace a section's text, or rename"),
        ],
        path: PathArg,
        text: Annotated[str | None, Field(description="the note body (create), or the section text")] = None,
        version: Annotated[str | None, Field(description="the version vault_read returned (not for create)")] = None,
        heading: Annotated[str | None, Field(description="section heading or 'A > B' (append: optional)")] = None,
        new_path: Annotated[str | None, Field(description="the new path (move)")] = None,
        frontmatter: Annotated[dict[str, Any] | None, Field(description="create: tag, category, concept")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> NoteRef:
        """Change the vault. Every change to an existing note needs the version you read; if a person edited
        the note since, nothing is written and you must read it again. Rules files cannot be written."""
        _refuse_unused(mode, {"text": text, "version": version, "heading": heading, "new_path": new_path,
                              "frontmatter": frontmatter})  # fmt: skip
        target, _, actor = scoped(ctx, user_id, agent_id, session_id)
        if mode == "create":
            return target.create(path, _need(text, "text", mode), frontmatter=frontmatter, actor=actor)
        known = _need(version, "version", mode)
        if mode == "append":
            return target.append(path, _need(text, "text", mode), version=known, heading=heading, actor=actor)
        if mode == "patch":
            return target.patch(path, _need(heading, "heading", mode), text or "", version=known, actor=actor)
        return target.move(path, _need(new_path, "new_path", mode), version=known, actor=actor)

    @server.tool(annotations=READ_ONLY)
    @reported
    def vault_context(
        ctx: Context[Any, Any],
        domain: Annotated[str, Field(min_length=1, description="the domain (top-level folder) to load")],
        budget_tokens: Annotated[int, Field(ge=16, le=1_000_000)] = 2000,
        query: Annotated[str | None, Field(description="add the atomic-note sections matching this")] = None,
        user_id: UserId = None,
        agent_id: AgentId = None,
        session_id: SessionId = None,
    ) -> DomainContext:
        """A domain's memory within a token budget: basic info and taxonomy, then challenges and the concept
        network (surveys shallow), then human preferences, then atomic notes matching ``query``."""
        return vault(ctx, user_id, agent_id, session_id).context(domain, budget_tokens=budget_tokens, query=query)

    @server.tool(annotations=READ_ONLY)
    @reported
    def vault_rules(
        ctx: Context[Any, Any], user_id: UserId = None, agent_id: AgentId = None, session_id: SessionId = None
    ) -> RulesBlock:
        """The project and agent rules, verbatim, in order. Follow them; they are read-only."""
        view, scope, _ = callers.scoped(ctx, user_id, agent_id, session_id)
        return Vault(view, chosen).rules(scope["agent_id"])  # rules are read without the vault's scope check


_USES = {"create": {"text", "frontmatter"}, "append": {"text", "version", "heading"},
         "patch": {"text", "version", "heading"}, "move": {"version", "new_path"}}  # fmt: skip


def _refuse_unused(mode: str, given: dict[str, object]) -> None:
    """An option the mode does not use is refused, not dropped (an agent would believe it took effect)."""
    unused = sorted(name for name, value in given.items() if value is not None and name not in _USES[mode])
    if unused:
        raise InvalidInputError(f"mode {mode} does not use {', '.join(unused)}; it takes "
                                f"{', '.join(sorted(_USES[mode]))}")  # fmt: skip


def _need(value: str | None, name: str, mode: str) -> str:
    if value is None:
        raise InvalidInputError(f"vault_write with mode={mode} needs {name}")
    return value
