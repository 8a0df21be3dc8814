"""``memstrata vault ...``: the Markdown vault (init, sync, show, search, context, write) and the rules layer.

``--vault PATH`` (before the command) overrides ``vault.path`` from the configuration.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress

from memstrata.cli.context import AgentOpt, CliState, SessionOpt, UserOpt, cli_state
from memstrata.cli.render import Table, console, counted, err_console, escape, history_table, print_json
from memstrata.errors import InvalidInputError
from memstrata.vault import NoteRef, SyncReport, Vault, VaultHit
from memstrata.vault.settings import vault_settings_of

app = typer.Typer(help="Markdown vault: notes a person can read and edit, and the rules layer.", no_args_is_help=True)

Version = Annotated[str, typer.Option("--version", "-V", help="the version `vault show` printed for the note")]


@app.callback()
def _vault_options(
    ctx: typer.Context,
    vault: Annotated[Path | None, typer.Option("--vault", help="the vault folder (default: vault.path)")] = None,
) -> None:
    cli_state(ctx).vault = vault


def open_vault(state: CliState, user: str | None = None, agent: str | None = None, session: str | None = None) -> Vault:
    memory = state.memory()
    settings = vault_settings_of(memory.settings)
    if state.vault is not None:
        settings = settings.model_copy(update={"path": str(state.vault)})
    if settings.tenant_id:  # the person at this machine keeps the vault, whichever tenant's keys may use it
        memory = memory.for_tenant(settings.tenant_id)
    return Vault(memory, settings).at(user_id=user, agent_id=agent, session_id=session)


def _sync(state: CliState, vault: Vault, confirm: bool) -> SyncReport:
    if state.json:
        return vault.sync(confirm_deletions=confirm, actor="cli")
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("indexing notes", total=None)
        return vault.sync(
            confirm_deletions=confirm,
            actor="cli",
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _print_sync(state: CliState, report: SyncReport) -> None:
    if state.json:
        print_json(report)
        return
    console.print(
        f"{report.new} new, {report.edited} edited, {report.moved} moved, {report.deleted} deleted, "
        f"{report.unchanged} unchanged · sections +{report.sections_added} ~{report.sections_updated} "
        f"-{report.sections_deleted} · {report.embedded} embedded · {report.seconds:.2f}s"
    )
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False)


def _print_ref(state: CliState, ref: NoteRef, verb: str) -> None:
    print_json(ref) if state.json else console.print(f"[green]{verb}[/green] {escape(ref.path)}  version {ref.version}")


@app.command("init")
def init(
    ctx: typer.Context,
    example: Annotated[bool, typer.Option("--example", help="add a small bilingual example domain")] = False,
) -> None:
    """Create the vault folder and its rules folder (and the example), then index it."""
    state = cli_state(ctx)
    vault = open_vault(state)
    report = vault.init(example=example)
    if not state.json:
        console.print(f"vault at {report.root}: created {counted(len(report.created), 'path')} (files and folders)")
        for path in report.created:
            console.print(f"  {path}", highlight=False)
    synced = _sync(state, vault, confirm=False)
    print_json({"init": report, "sync": synced}) if state.json else _print_sync(state, synced)


@app.command("sync")
def sync(
    ctx: typer.Context,
    confirm_deletions: Annotated[bool, typer.Option(help="allow a sync that drops many notes")] = False,
    rebuild: Annotated[bool, typer.Option(help="drop the index first and build it again from the files")] = False,
) -> None:
    """Bring the index in line with the files (new, edited, moved, deleted notes)."""
    state = cli_state(ctx)
    vault = open_vault(state)
    if rebuild:
        dropped = vault.drop_index(confirm=True)
        if not state.json:
            console.print(f"dropped {dropped} indexed sections")
    _print_sync(state, _sync(state, vault, confirm_deletions or rebuild))


@app.command("show")
def show(
    ctx: typer.Context,
    path: str,
    depth: Annotated[int, typer.Option(min=0, max=6, help="heading levels: 1 = H1 only")] = 6,
    sentences: Annotated[int | None, typer.Option(min=0, help="first sentences per section")] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="token budget")] = None,
    heading: Annotated[str | None, typer.Option(help="only this section, e.g. 'Methods > Results'")] = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """A note, progressively; prints its version (needed to write to it)."""
    state = cli_state(ctx)
    view = open_vault(state, user, agent, session).show(
        path, depth=depth, sentences=sentences, budget_tokens=budget, heading=heading
    )
    if state.json:
        print_json(view)
        return
    console.print(f"[dim]{escape(view.path)} · version {view.version} · {view.tokens} tokens[/dim]", highlight=False)
    console.print(view.text, markup=False, highlight=False)


def _hits_table(hits: list[VaultHit], query: str) -> Table:
    table = Table(title=f"vault: {query}")
    for column in ("score", "note", "section", "text", "uses"):
        table.add_column(column)
    for hit in hits:
        body = hit.text.partition("\n")[2].replace("\n", " ")
        table.add_row(f"{hit.score:.3f}", hit.path, hit.heading, body[:80], str(hit.uses))
    return table


@app.command("search")
def search(
    ctx: typer.Context,
    query: str,
    domain: Annotated[str | None, typer.Option(help="only this domain")] = None,
    category: Annotated[str | None, typer.Option(help="a category from taxonomy.md")] = None,
    concept: Annotated[str | None, typer.Option(help="a concept from taxonomy.md")] = None,
    tag: Annotated[str | None, typer.Option(help="method, benchmark, survey, blog, ...")] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, max=100)] = 10,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Search note sections, optionally by domain, category, concept or tag."""
    state = cli_state(ctx)
    vault = open_vault(state, user, agent, session)
    hits = vault.search(query, domain=domain, category=category, concept=concept, tag=tag, limit=limit)
    if not hits and not vault.domains():  # searched nothing at all: say why
        err_console.print("[yellow]the vault index is empty[/yellow]: run `memstrata vault sync` first",
                          highlight=False)  # fmt: skip
    print_json(hits) if state.json else console.print(_hits_table(hits, query))


@app.command("notes")
def notes(
    ctx: typer.Context,
    domain: Annotated[str | None, typer.Option()] = None,
    category: Annotated[str | None, typer.Option()] = None,
    concept: Annotated[str | None, typer.Option()] = None,
    tag: Annotated[str | None, typer.Option()] = None,
) -> None:
    """The catalog of indexed notes, with their taxonomy coordinates and usage."""
    state = cli_state(ctx)
    found = open_vault(state).notes(domain=domain, category=category, concept=concept, tag=tag)
    if state.json:
        print_json(found)
        return
    table = Table(title=f"{len(found)} notes")
    for column in ("path", "title", "layer", "tags", "category", "concepts", "uses"):
        table.add_column(column)
    for note in found:
        table.add_row(note.path, note.title, note.layer, ", ".join(note.tags), note.category or "",
                      ", ".join(note.concepts), str(note.uses))  # fmt: skip
    console.print(table)


@app.command("context")
def context(
    ctx: typer.Context,
    domain: str,
    budget: Annotated[int, typer.Option(min=16, help="token budget")] = 2000,
    query: Annotated[str | None, typer.Option(help="add atomic-note sections matching this")] = None,
    rules: Annotated[bool, typer.Option(help="put the rules layer first, as context() does")] = False,
    agent: AgentOpt = None,
) -> None:
    """A domain's memory for a prompt, in seed 000's order, within the budget."""
    state = cli_state(ctx)
    vault = open_vault(state)
    built = vault.context(domain, budget_tokens=budget, query=query)
    text = (vault.rules(agent).text + "\n\n" + built.text) if rules else built.text
    if state.json:
        print_json(built)
        return
    console.print(text, markup=False, highlight=False)
    console.print(f"[dim]{built.tokens} of {built.budget_tokens} tokens, {len(built.pieces)} pieces[/dim]")


@app.command("write")
def write(
    ctx: typer.Context,
    mode: Annotated[str, typer.Argument(help="create, append, patch or move")],
    path: str,
    text: Annotated[str | None, typer.Option(help="note body (create) or section text; '-' reads stdin")] = None,
    version: Annotated[str | None, typer.Option("--version", "-V", help="the version `vault show` printed")] = None,
    heading: Annotated[str | None, typer.Option(help="the section to append to or patch")] = None,
    to: Annotated[str | None, typer.Option(help="the new path (move)")] = None,
    frontmatter: Annotated[str | None, typer.Option(help='create: JSON, e.g. \'{"tag": "method"}\'')] = None,
) -> None:
    """Write to a note as an agent would: every change names the version it was based on."""
    state = cli_state(ctx)
    vault = open_vault(state)
    body = typer.get_text_stream("stdin").read() if text == "-" else text
    try:
        front: Any = json.loads(frontmatter) if frontmatter else None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f'--frontmatter must be a JSON object, e.g. \'{{"tag": "method"}}\' ({exc.msg})'
        ) from None
    if mode == "create":
        ref = vault.create(path, _need(body, "--text"), frontmatter=front, actor="cli")
    elif mode == "append":
        ref = vault.append(
            path, _need(body, "--text"), version=_need(version, "--version"), heading=heading, actor="cli"
        )
    elif mode == "patch":
        ref = vault.patch(
            path, _need(heading, "--heading"), body or "", version=_need(version, "--version"), actor="cli"
        )
    elif mode == "move":
        ref = vault.move(path, _need(to, "--to"), version=_need(version, "--version"), actor="cli")
    else:
        raise InvalidInputError(f"unknown write mode {mode!r}; use create, append, patch or move")
    _print_ref(state, ref, mode.upper())


def _need(value: str | None, option: str) -> str:
    if value is None:
        raise InvalidInputError(f"this write needs {option}")
    return value


@app.command("rules")
def rules(
    ctx: typer.Context,
    agent: AgentOpt = None,
    every_agent: Annotated[bool, typer.Option(help="every agent's rules, each marked with its agent")] = False,
) -> None:
    """The rules layer, verbatim: rules for every agent, then the given agent's own (--every-agent: all agents')."""
    state = cli_state(ctx)
    block = open_vault(state).rules(agent, every_agent=every_agent)
    if state.json:
        print_json(block)
    else:
        console.print(block.text or "(no rules files)", markup=False, highlight=False)


@app.command("history")
def history(ctx: typer.Context, path: str) -> None:
    """Every change to a note's sections: who, when, why, old and new text."""
    state = cli_state(ctx)
    events = open_vault(state).history(path)
    print_json(events) if state.json else console.print(history_table(events, of=path))


@app.command("forgetting")
def forgetting(
    ctx: typer.Context,
    min_idle_days: Annotated[float, typer.Option(min=0)] = 30.0,
    limit: Annotated[int, typer.Option(min=1)] = 20,
) -> None:
    """Atomic notes used least and idle longest (forget one with `vault forget PATH -V VERSION --confirm`)."""
    state = cli_state(ctx)
    found = open_vault(state).forgetting(min_idle_days=min_idle_days, limit=limit)
    if state.json:
        print_json(found)
        return
    table = Table(title="forgetting candidates")
    for column in ("path", "title", "uses", "idle days", "version"):
        table.add_column(column)
    for item in found:
        table.add_row(item.path, item.title, str(item.uses), f"{item.idle_days:.0f}", item.version)
    console.print(table)


@app.command("forget")
def forget(
    ctx: typer.Context,
    path: str,
    version: Version,
    confirm: Annotated[bool, typer.Option("--confirm", help="required: move the note to .trash/")] = False,
) -> None:
    """Move a note to the vault's .trash/ folder and out of the index."""
    state = cli_state(ctx)
    _print_ref(state, open_vault(state).forget(path, version=version, confirm=confirm, actor="cli"), "FORGOT")
