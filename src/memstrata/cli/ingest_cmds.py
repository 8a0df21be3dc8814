"""``memstrata ingest PATH...`` and ``memstrata collections list|show|remove``: documents as knowledge.

Both are typer apps composed in cli/app.py. A run shows
progress bars on stderr, a table of what happened per file, and exits 1 when any file failed, so a
script notices; ``--json`` prints the report instead.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from memstrata.cli.context import AgentOpt, SessionOpt, UserOpt, cli_state
from memstrata.cli.render import console, err_console, print_json
from memstrata.errors import ConfirmationRequiredError, NotFoundError
from memstrata.knowledge import CHUNKER_NAMES, ChunkSize, IngestOptions, Ingestor, IngestReport, collections
from memstrata.knowledge.progress import RichProgress
from memstrata.knowledge.records import check_collection
from memstrata.knowledge.state import indexed_sources
from memstrata.knowledge.walk import DEFAULT_EXCLUDES
from memstrata.knowledge.writer import KnowledgeWriter
from memstrata.providers.llm_factory import resolve_llm
from memstrata.types import Scope
from memstrata.validation import guarded

app = typer.Typer()
collections_app = typer.Typer(help="Knowledge collections: list, show, remove.", no_args_is_help=True)

CollectionOpt = Annotated[str, typer.Option("--collection", "-c", help="collection name")]


def _scope(user: str | None, agent: str | None, session: str | None) -> Scope:
    return guarded(lambda: Scope(user_id=user, agent_id=agent, session_id=session), what="scope")


@app.command("ingest")
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(help="files or folders")],
    collection: CollectionOpt = "default",
    chunker: Annotated[str, typer.Option(help=f"one of {', '.join(CHUNKER_NAMES)}")] = "structure",
    size: Annotated[int, typer.Option(help="chunk size in tokens")] = 256,
    overlap: Annotated[int, typer.Option(help="overlap in tokens")] = 32,
    include: Annotated[list[str] | None, typer.Option(help="glob to include (repeatable), e.g. '*.pdf'")] = None,
    exclude: Annotated[list[str] | None, typer.Option(help="glob to exclude (repeatable; replaces defaults)")] = None,
    retire: Annotated[bool, typer.Option(help="retire indexed files that are gone from the folders")] = True,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Convert documents to Markdown, chunk them and store the chunks as searchable knowledge."""
    state = cli_state(ctx)
    scope = _scope(user, agent, session)
    memory = state.memory()
    options = guarded(
        lambda: IngestOptions(
            collection=collection,
            chunker=chunker,  # validated by the model
            size=ChunkSize(size=size, overlap=overlap),
            include=tuple(include or ()),
            exclude=tuple(exclude) if exclude is not None else DEFAULT_EXCLUDES,
            retire_missing=retire,
        ),
        what="ingest options",
    )
    model = resolve_llm(memory.settings.llm, os.environ).model if options.chunker == "agentic" else None
    progress = None if state.json else RichProgress()
    report = Ingestor(memory.store, memory.embedder, scope, options, model=model, progress=progress).run(paths)
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
        table.add_row(f"[{colour}]{outcome.status}[/{colour}]", Path(outcome.source).name, str(outcome.pages),
                      str(outcome.chunks), f"{outcome.seconds:.2f}", note)  # fmt: skip
    console.print(table)
    summary = report.summary()
    console.print(", ".join(f"{key} {value}" for key, value in summary.items() if key not in ("collection", "chunker")))
    if report.failed:
        err_console.print(f"[red]{len(report.failed)} file(s) failed[/red]; the others were ingested")


@collections_app.command("list")
def list_collections(
    ctx: typer.Context, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None
) -> None:
    """Every collection of a scope: sources, chunks, tokens, formats."""
    state = cli_state(ctx)
    found = collections(state.memory().store, _scope(user, agent, session))
    if state.json:
        print_json([asdict(summary) for summary in found])
        return
    table = Table(title=f"{len(found)} collections")
    for column in ("name", "sources", "chunks", "tokens", "formats"):
        table.add_column(column)
    for summary in found:
        formats = ", ".join(f"{fmt} {count}" for fmt, count in sorted(summary.formats.items()))
        table.add_row(summary.name, str(summary.sources), str(summary.chunks), str(summary.tokens), formats)
    console.print(table)


@collections_app.command("show")
def show(
    ctx: typer.Context, name: str, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None
) -> None:
    """The sources of one collection, with their hash, title and chunk count."""
    state = cli_state(ctx)
    sources = indexed_sources(state.memory().store, _scope(user, agent, session), check_collection(name))
    if not sources:
        raise NotFoundError(f"no collection {name!r} in this scope; `memstrata collections list` shows them")
    rows = [
        {"source": s.source, "title": s.title, "format": s.format, "chunks": len(s.chunks), "hash": s.source_hash}
        for s in sorted(sources.values(), key=lambda s: s.source)
    ]
    if state.json:
        print_json(rows)
        return
    table = Table(title=f"collection {name}: {len(rows)} sources")
    for column in ("source", "title", "format", "chunks", "hash"):
        table.add_column(column)
    for row in rows:
        table.add_row(
            str(row["source"]), str(row["title"]), str(row["format"]), str(row["chunks"]), str(row["hash"])[:12]
        )
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
    memory = state.memory()
    sources = indexed_sources(memory.store, _scope(user, agent, session), check_collection(name))
    if not sources:
        raise NotFoundError(f"no collection {name!r} in this scope; `memstrata collections list` shows them")
    chunks = [chunk for source in sources.values() for chunk in source.chunks]
    if not yes:
        raise ConfirmationRequiredError(
            f"this removes {len(chunks)} chunks of {len(sources)} sources in collection {name!r}; add --yes"
        )
    KnowledgeWriter(memory.store, memory.embedder).retire(chunks, reason=f"collection {name} removed")
    result = {"collection": name, "sources": len(sources), "chunks": len(chunks)}
    print_json(result) if state.json else console.print(f"[red]REMOVED[/red] {name}: {len(chunks)} chunks")
