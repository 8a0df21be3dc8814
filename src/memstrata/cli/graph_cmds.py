"""``memstrata graph ...``: entities, neighbours, paths, relation history, exports and merges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.text import Text

from memstrata.cli.context import AgentOpt, IdArg, SessionOpt, UserOpt, cli_state, scope_args
from memstrata.cli.render import Table, console, history_table, print_json
from memstrata.graph.subgraph import Edge, Subgraph
from memstrata.records.graph import Entity

if TYPE_CHECKING:
    from memstrata.graph.view import ExportFormat

app = typer.Typer(help="Graph memory: entities and relations with temporal validity.", no_args_is_help=True)


def _entities_table(entities: list[Entity]) -> Table:
    table = Table(title=f"{len(entities)} entities")
    for column in ("id", "name", "type", "aliases", "sources"):
        table.add_column(column)
    for entity in entities:
        table.add_row(entity.id[:12], entity.name, entity.type, ", ".join(entity.aliases), str(len(entity.message_ids)))
    return table


def _edges_table(edges: list[Edge], title: str) -> Table:
    table = Table(title=title)
    for column in ("source", "relation", "target", "valid from", "valid to", "conf", "id"):
        table.add_column(column)
    for edge in edges:
        record = edge.record
        until = f"{record.valid_to:%Y-%m-%d %H:%M}" if record.valid_to else Text("current", style="green")
        table.add_row(edge.source, edge.relation, edge.target, f"{record.valid_from:%Y-%m-%d %H:%M}", until,
                      f"{record.confidence:.2f}", record.id[:12])  # fmt: skip
    return table


def _show_subgraph(graph: Subgraph, title: str, *, as_json: bool) -> None:
    if as_json:
        print(graph.to_json())
    else:
        console.print(_edges_table(graph.edges(), title))


@app.command("entities")
def entities(ctx: typer.Context, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None) -> None:
    """Every live entity of a scope, with its aliases."""
    state = cli_state(ctx)
    found = state.memory().graph.entities(**scope_args(user, agent, session))
    print_json(found) if state.json else console.print(_entities_table(found))


@app.command("neighbors")
def neighbors(
    ctx: typer.Context,
    entity: str,
    hops: Annotated[int, typer.Option(min=1, max=6)] = 1,
    closed: Annotated[bool, typer.Option("--closed", help="include relations that are no longer true")] = False,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Relations within N hops of an entity (by name, alias or id)."""
    state = cli_state(ctx)
    graph = state.memory().graph.neighbors(entity, hops=hops, include_closed=closed, **scope_args(user, agent, session))
    _show_subgraph(graph, f"within {hops} hop(s) of {entity}", as_json=state.json)


@app.command("path")
def path(
    ctx: typer.Context,
    source: str,
    target: str,
    max_hops: Annotated[int, typer.Option(min=1, max=6)] = 4,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """The shortest chain of current relations between two entities."""
    state = cli_state(ctx)
    chain = state.memory().graph.path(source, target, max_hops=max_hops, **scope_args(user, agent, session))
    if chain is None:
        if state.json:  # --json output stays JSON on every outcome
            print(json.dumps(None))
        else:
            console.print(f"no path between {source} and {target} within {max_hops} hops", markup=False)
        raise typer.Exit(1)
    if state.json:
        print(json.dumps([{"source": e.source, "relation": e.relation, "target": e.target} for e in chain],
                         ensure_ascii=False))  # fmt: skip
    else:
        console.print(" · ".join(str(edge) for edge in chain) or f"{source} is {target}", markup=False)


@app.command("relations")
def relations(
    ctx: typer.Context,
    entity: str,
    relation: Annotated[str | None, typer.Option(help="only this relation, e.g. lives_in")] = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Every relation of an entity, current and closed, oldest first."""
    state = cli_state(ctx)
    edges = state.memory().graph.relation_history(entity, relation, **scope_args(user, agent, session))
    if state.json:
        print_json([edge.record for edge in edges])
    else:
        console.print(_edges_table(edges, f"relations of {entity}"))


@app.command("history")
def history(
    ctx: typer.Context, record_id: IdArg, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None
) -> None:
    """ADD / MERGE / CLOSE events of one entity or relation."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    full_id = state.memory().resolve_id(record_id, what="graph", **scope)
    events = state.memory().graph.history(full_id, **scope)
    print_json(events) if state.json else console.print(history_table(events, of=full_id))


@app.command("export")
def export(
    ctx: typer.Context,
    fmt: Annotated[str, typer.Option("--format", "-f", help="json, graphml or mermaid")] = "json",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write to this file instead of stdout")] = None,
    current_only: Annotated[bool, typer.Option("--current-only", help="leave out closed relations")] = False,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """The scope's graph as JSON, GraphML (Gephi, yEd, networkx) or a Mermaid flowchart."""
    state = cli_state(ctx)
    text = state.memory().graph.export(
        cast("ExportFormat", fmt),  # export() refuses anything but json, graphml and mermaid
        include_closed=not current_only,
        **scope_args(user, agent, session),
    )
    if output is None:
        print(text)
    else:
        output.write_text(text, encoding="utf-8")
        console.print(f"wrote {output}")


@app.command("merge")
def merge(
    ctx: typer.Context,
    keep: str,
    duplicate: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Merge DUPLICATE into KEEP: names become aliases, relations move over."""
    state = cli_state(ctx)
    merged = state.memory().graph.merge(keep, duplicate, **scope_args(user, agent, session), actor="cli")
    print_json(merged) if state.json else console.print(
        f"{merged.name} ({merged.type}) aliases: {merged.aliases}", markup=False
    )
