"""``memstrata ingest PATH...`` and ``memstrata collections list|show|remove``: documents as knowledge,
through ``memory.knowledge``.

Both are typer apps composed in cli/app.py. A run shows progress bars on stderr, a table of what happened
per file, and exits 1 when any file failed, so a script notices; ``--json`` prints the report instead.
A PATH may also be one http(s) URL.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from memstrata.cli.context import AgentOpt, SessionOpt, UserOpt, cli_state
from memstrata.cli.render import Table, console, err_console, escape, print_json
from memstrata.knowledge import CHUNKER_NAMES, IngestReport
from memstrata.knowledge.progress import RichProgress

app = typer.Typer()
collections_app = typer.Typer(help="Knowledge collections: list, show, remove.", no_args_is_help=True)

CollectionOpt = Annotated[str, typer.Option("--collection", "-c", help="collection name")]


@app.command("ingest")
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[str], typer.Argument(help="files, folders, or one http(s) URL")],
    collection: CollectionOpt = "default",
    chunker: Annotated[str | None, typer.Option(help=f"one of {', '.join(CHUNKER_NAMES)} (\\[ingest] default)")] = None,
    size: Annotated[int | None, typer.Option(help="chunk size in tokens (\\[ingest] default)")] = None,
    overlap: Annotated[int | None, typer.Option(help="overlap in tokens (\\[ingest] default)")] = None,
    include: Annotated[list[str] | None, typer.Option(help="glob to include (repeatable), e.g. '*.pdf'")] = None,
    exclude: Annotated[list[str] | None, typer.Option(help="glob to exclude (repeatable; replaces defaults)")] = None,
    retire: Annotated[bool, typer.Option(help="retire indexed files that are gone from the folders")] = True,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Convert documents to Markdown, chunk them and store the chunks as searchable knowledge."""
    state = cli_state(ctx)
    target: str | list[str] = paths[0] if len(paths) == 1 else paths
    report = state.memory().knowledge.ingest(
        target, collection=collection, chunker=chunker, size=size, overlap=overlap, include=include or (),
        exclude=exclude, retire_missing=retire, progress=None if state.json else RichProgress(),
        user_id=user, agent_id=agent, session_id=session,
    )  # fmt: skip
    if state.json:
        print_json({"summary": report.summary(), "sources": [asdict(outcome) for outcome in report.outcomes]})
    else:
        _print_report(report)
    if report.failed:
        raise typer.Exit(1)


def _print_report(report: IngestReport) -> None:
    table = Table(title=f"collection {report.collection} ({report.chunker} chunker)")
    for column in ("status", "source", "pages", "chunks", "seconds", "note"):
        table.add_column(column)
    colours = {"added": "green", "replaced": "yellow", "failed": "red", "retired": "magenta", "skipped": "dim"}
    for outcome in report.outcomes:
        if outcome.status == "unchanged":
            continue
        colour = colours.get(outcome.status, "white")
        note = outcome.error or "; ".join(outcome.notes)
        table.add_row(Text(outcome.status, style=colour), Path(outcome.source).name, str(outcome.pages),
                      str(outcome.chunks), f"{outcome.seconds:.2f}", note)  # fmt: skip
    console.print(table)
    summary = report.summary()
    console.print(
        ", ".join(f"{key} {value}" for key, value in summary.items() if key not in ("collection", "chunker")),
        markup=False,
    )
    if report.failed:
        err_console.print(f"[red]{len(report.failed)} file(s) failed[/red]; the others were ingested")


@collections_app.command("list")
def list_collections(
    ctx: typer.Context, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None
) -> None:
    """Every collection of a scope: sources, chunks, tokens, pages, formats."""
    state = cli_state(ctx)
    found = state.memory().knowledge.collections(user_id=user, agent_id=agent, session_id=session)
    if state.json:
        print_json([summary.model_dump(mode="json") for summary in found])
        return
    table = Table(title=f"{len(found)} collections")
    for column in ("name", "sources", "chunks", "tokens", "pages", "formats"):
        table.add_column(column)
    for summary in found:
        formats = ", ".join(f"{fmt} {count}" for fmt, count in sorted(summary.formats.items()))
        table.add_row(summary.name, str(summary.sources), str(summary.chunks), str(summary.tokens),
                      str(summary.pages), formats)  # fmt: skip
    console.print(table)


@collections_app.command("show")
def show(
    ctx: typer.Context, name: str, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None
) -> None:
    """The sources of one collection, with their hash, title, version and chunk count."""
    state = cli_state(ctx)
    sources = state.memory().knowledge.sources(name, user_id=user, agent_id=agent, session_id=session)
    if state.json:
        print_json([summary.model_dump(mode="json") for summary in sources])
        return
    table = Table(title=f"collection {name}: {len(sources)} sources")
    for column in ("source", "title", "format", "pages", "chunks", "version", "hash"):
        table.add_column(column)
    for s in sources:
        table.add_row(s.source, s.title, s.format, str(s.pages), str(s.chunks), str(s.version), s.source_hash[:12])
    console.print(table)


@collections_app.command("remove")
def remove(
    ctx: typer.Context,
    name: str,
    yes: Annotated[bool, typer.Option("--yes", help="confirm")] = False,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Take a collection out of search (its chunks are soft-deleted; history keeps their text)."""
    state = cli_state(ctx)
    removed = state.memory().knowledge.remove(name, confirm=yes, user_id=user, agent_id=agent, session_id=session)
    if state.json:
        print_json(asdict(removed))
    else:
        console.print(f"[red]REMOVED[/red] {escape(name)}: {removed.chunks} chunks of {removed.sources} sources")
