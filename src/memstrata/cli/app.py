"""The ``memstrata`` command line: translate arguments, call the Memory facade, render.

Every command takes the scope as --user / --agent / --session. Errors print one line that says
what to do and exit with status 2 (bad input) or 1 (anything else).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, TypedDict

import typer

from memstrata.cli.render import (
    console,
    err_console,
    history_table,
    hits_table,
    jobs_table,
    memories_table,
    memory_detail,
    print_json,
    to_jsonable,
)
from memstrata.config import load_settings
from memstrata.errors import InvalidInputError, MemstrataError
from memstrata.memory import Memory

app = typer.Typer(
    name="memstrata",
    help="Layered long-term memory for LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="user_id scope")]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="agent_id scope")]
SessionOpt = Annotated[str | None, typer.Option("--session", "-s", help="session_id scope")]


class State:
    def __init__(self) -> None:
        self.db: Path | None = None
        self.config: Path | None = None
        self.json = False
        self._memory: Memory | None = None

    def memory(self) -> Memory:
        if self._memory is None:
            overrides: dict[str, Any] = {}
            settings = load_settings(self.config) if self.config else load_settings()
            if self.db is not None:
                overrides = settings.model_dump()
                overrides["store"]["path"] = str(self.db)
                settings = load_settings(overrides)
            self._memory = Memory.from_config(settings)
        return self._memory


state = State()


@app.callback()
def _global(
    db: Annotated[Path | None, typer.Option("--db", help="SQLite file (default: user data dir)")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="memstrata.toml to read")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    state.db, state.config, state.json = db, config, as_json


class ScopeArgs(TypedDict):
    user_id: str | None
    agent_id: str | None
    session_id: str | None


def scope_args(user: str | None, agent: str | None, session: str | None) -> ScopeArgs:
    return {"user_id": user, "agent_id": agent, "session_id": session}


def _parse_json_option(value: str | None, name: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f'--{name} must be JSON, e.g. \'{{"source": "notes"}}\' ({exc.msg})') from None


@app.command()
def add(
    text: Annotated[list[str], typer.Argument(help="one or more texts; '-' reads lines from stdin")],
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    kind: Annotated[str, typer.Option(help="fact, preference, procedure, knowledge, ...")] = "fact",
    key: Annotated[str | None, typer.Option(help="namespaced key, e.g. project:db:engine")] = None,
    metadata: Annotated[str | None, typer.Option(help="JSON object")] = None,
    role: Annotated[str | None, typer.Option(help="store as conversation turns with this role instead")] = None,
    infer: Annotated[bool, typer.Option(help="extract facts with the configured model (see `doctor`)")] = False,
    wait: Annotated[bool, typer.Option(help="with --infer: wait for extraction and show its decisions")] = True,
) -> None:
    """Add memories; with --role, raw conversation turns; with --infer, extract facts from the turns."""
    texts = [line for line in sys.stdin.read().splitlines() if line.strip()] if text == ["-"] else text
    payload: Any = [{"role": role, "content": t} for t in texts] if role else (texts[0] if len(texts) == 1 else texts)
    memory = state.memory()
    options: dict[str, Any] = {"infer": True, "wait": wait} if infer else {"kind": kind, "key": key}
    result = memory.add(
        payload, **scope_args(user, agent, session), metadata=_parse_json_option(metadata, "metadata"), **options
    )
    jobs = [job for job in memory.list_jobs(**scope_args(user, agent, session)) if job.id == result.job_id]
    if state.json:
        print_json({**result.model_dump(mode="json"), "jobs": to_jsonable(jobs)})
        return
    for event in result.results:
        console.print(f"[green]{event.event}[/green] {event.id}  {event.memory}")
    for job in jobs:
        console.print(jobs_table([job]))
        for decision in job.result.get("decisions", []):
            console.print(f"  [cyan]{decision['action']}[/cyan] {decision.get('text') or decision.get('old')}")


@app.command()
def search(
    query: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-k")] = 10,
    kind: Annotated[list[str] | None, typer.Option(help="only these kinds")] = None,
    threshold: Annotated[float | None, typer.Option(help="minimum cosine similarity")] = None,
    filters: Annotated[str | None, typer.Option(help='JSON filters, e.g. \'{"metadata": {"topic": "x"}}\'')] = None,
) -> None:
    """Hybrid keyword + vector search within a scope."""
    parsed = _parse_json_option(filters, "filters") or {}
    if kind:
        parsed["kind"] = kind
    hits = state.memory().search(
        query, **scope_args(user, agent, session), limit=limit, filters=parsed, threshold=threshold
    )
    if state.json:
        print_json(hits)
    else:
        console.print(hits_table(hits, query))


@app.command("list")
def list_(
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    limit: int = 50,
    offset: int = 0,
    kind: Annotated[list[str] | None, typer.Option()] = None,
    status: Annotated[list[str] | None, typer.Option(help="active, pending, archived, deleted")] = None,
    order_by: Annotated[str, typer.Option(help="created_at, updated_at, event_time, ...")] = "created_at",
) -> None:
    """List memories in a scope, newest first."""
    filters: dict[str, Any] = {}
    if kind:
        filters["kind"] = kind
    if status:
        filters["status"] = status
    items = state.memory().get_all(
        **scope_args(user, agent, session),
        filters=filters,
        limit=limit,
        offset=offset,
        order_by=order_by,  # type: ignore[arg-type]
    )
    if state.json:
        print_json(items)
    else:
        console.print(memories_table(items))


@app.command()
def show(memory_id: str, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None) -> None:
    """Show one memory with every field."""
    item = state.memory().get(memory_id, **scope_args(user, agent, session))
    if state.json:
        print_json(item)
    else:
        console.print(memory_detail(item))


@app.command()
def history(memory_id: str, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None) -> None:
    """Every change made to a memory: ADD, UPDATE, DELETE with old and new text."""
    events = state.memory().history(memory_id, **scope_args(user, agent, session))
    if state.json:
        print_json(events)
    else:
        console.print(history_table(events))


@app.command()
def update(
    memory_id: str,
    text: Annotated[str | None, typer.Argument()] = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    metadata: Annotated[str | None, typer.Option(help="JSON object merged into metadata")] = None,
    reason: str | None = None,
) -> None:
    """Change a memory's text and/or metadata; history keeps the old text."""
    item = state.memory().update(
        memory_id,
        text,
        metadata=_parse_json_option(metadata, "metadata"),
        reason=reason,
        **scope_args(user, agent, session),
        actor="cli",
    )
    print_json(item) if state.json else console.print(f"[yellow]UPDATE[/yellow] {item.id}  {item.text}")


@app.command()
def delete(
    memory_id: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    reason: str | None = None,
    purge: Annotated[bool, typer.Option(help="remove the rows for good instead of a soft delete")] = False,
) -> None:
    """Soft-delete a memory (or --purge it)."""
    memory = state.memory()
    if purge:
        memory.purge(memory_id, **scope_args(user, agent, session))
        print_json({"purged": memory_id}) if state.json else console.print(f"[red]PURGED[/red] {memory_id}")
        return
    item = memory.delete(memory_id, **scope_args(user, agent, session), actor="cli", reason=reason)
    print_json(item) if state.json else console.print(f"[red]DELETE[/red] {item.id}  {item.text}")


@app.command("export")
def export_(path: Path) -> None:
    """Write the whole store (memories, vectors, history, raw turns) to a JSONL file."""
    lines = state.memory().export_jsonl(path)
    print_json({"path": str(path), "lines": lines}) if state.json else console.print(f"wrote {lines} lines to {path}")


@app.command("import")
def import_(path: Path) -> None:
    """Load a JSONL export into this store (all or nothing)."""
    if not path.is_file():
        raise InvalidInputError(f"{path} is not a file; pass the path of a `memstrata export` file")
    count = state.memory().import_jsonl(path)
    print_json({"imported": count}) if state.json else console.print(f"imported {count} memories from {path}")


@app.command()
def stats(user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None) -> None:
    """Counts by status and kind, raw turns, history, vectors, file size."""
    result = state.memory().stats(**scope_args(user, agent, session))
    if state.json:
        print_json(vars(result))
        return
    for field, value in vars(result).items():
        console.print(f"[bold]{field}[/bold]: {value}")


@app.command()
def reindex(batch_size: int = 256) -> None:
    """Embed every memory that lacks a vector of the configured embedding model."""
    total = sum(state.memory().reindex(batch_size=batch_size))
    print_json({"reindexed": total}) if state.json else console.print(f"re-embedded {total} memories")


@app.command()
def jobs(
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    status: Annotated[list[str] | None, typer.Option(help="waiting, queued, running, done, failed")] = None,
    retry: Annotated[str | None, typer.Option(help="queue this failed job again")] = None,
    flush: Annotated[bool, typer.Option(help="run every pending job now")] = False,
    limit: int = 50,
) -> None:
    """The extraction queue: status, failures (with the model's raw output), retry, flush."""
    memory = state.memory()
    if retry:
        memory.retry_job(retry)
    if flush or retry:
        memory.flush(**scope_args(user, agent, session))
    found = memory.list_jobs(**scope_args(user, agent, session), status=status or (), limit=limit)
    print_json(found) if state.json else console.print(jobs_table(found))


@app.command()
def doctor() -> None:
    """Which store, embedder and model are in use, and why."""
    memory = state.memory()
    report = {
        "store": memory.store.location,
        "schema_version": memory.stats().schema_version,
        "embedder": f"{memory.embedder.model_id}:{memory.embedder.dims}",
        "stored_embedding": memory.store.embedding_id() or "(no vectors yet)",
        "extractor": memory.extractor.name,
        "reconciler": memory.reconciler.name,
        "why": memory.llm_reason,
        "trigger": memory.settings.write.trigger,
    }
    if state.json:
        print_json(report)
        return
    for field, value in report.items():
        console.print(f"{field:>17}: {value}", markup=False, highlight=False)


@app.command()
def demo(
    db: Annotated[Path | None, typer.Option(help="store for the walkthrough (default: a temporary file)")] = None,
) -> None:
    """A bilingual walkthrough: add, cross-lingual search, update, delete, history."""
    from memstrata.cli.demo import run_demo

    run_demo(db)


# Command groups that live in their own modules register themselves on `app` when imported.
from memstrata.cli import graph_cmds, lifecycle_cmds, service_cmds, storage_cmds  # noqa: E402, F401


def main() -> None:
    try:
        app(standalone_mode=False)
    except MemstrataError as exc:
        err_console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(2 if isinstance(exc, InvalidInputError) else 1)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # click usage errors carry their own exit code
        code = getattr(exc, "exit_code", None)
        show = getattr(exc, "show", None)
        if code is not None and callable(show):
            show()
            sys.exit(code)
        raise
