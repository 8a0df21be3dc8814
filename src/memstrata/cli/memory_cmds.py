"""The everyday commands: add, search, list, show, history, update, delete, jobs, export/import, stats,
reindex, doctor, demo. Wherever a command takes an id, a unique prefix of it will do (tables show 12
characters)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from memstrata.cli.context import (
    AgentOpt,
    IdArg,
    SessionOpt,
    UserOpt,
    check_kinds,
    cli_state,
    parse_json_option,
    parse_time_option,
    scope_args,
)
from memstrata.cli.doctor import doctor
from memstrata.cli.jsonl_turns import jsonl_turns
from memstrata.cli.progress import job_progress, progress_bar
from memstrata.cli.render import (
    console,
    counted,
    decision_line,
    err_console,
    escape,
    history_table,
    hits_table,
    jobs_table,
    key_values,
    memories_table,
    memory_detail,
    print_json,
    to_jsonable,
)
from memstrata.errors import InvalidInputError, JobFailedError

app = typer.Typer()


@app.command()
def add(
    ctx: typer.Context,
    text: Annotated[list[str], typer.Argument(help="one or more texts; '-' reads lines from stdin")],
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    kind: Annotated[str | None, typer.Option(help="fact, preference, procedure, knowledge, ... (default fact)")] = None,
    key: Annotated[str | None, typer.Option(help="namespaced key, e.g. project:db:engine")] = None,
    metadata: Annotated[str | None, typer.Option(help="JSON object")] = None,
    role: Annotated[str | None, typer.Option(help="store as conversation turns with this role instead")] = None,
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl",
            help='each text, stdin line or line of a file named is one turn as JSON: {"role", "content", '
            '"timestamp", "name", "id"} - imports a past conversation with when each turn was said',
        ),
    ] = False,
    infer: Annotated[bool, typer.Option(help="extract facts with the configured model (see `doctor`)")] = False,
    wait: Annotated[bool, typer.Option(help="with --infer: wait for extraction and show its decisions")] = True,
    event_time: Annotated[
        str | None, typer.Option(help="ISO 8601 time the text is true from / happened (2024-05-01, 2024-05-01T09:30Z)")
    ] = None,
) -> None:
    """Add memories; with --role, raw conversation turns; with --infer, extract facts from the turns."""
    state = cli_state(ctx)
    texts = [line for line in sys.stdin.read().splitlines() if line.strip()] if text == ["-"] else text
    if not texts:
        raise InvalidInputError("'-' read no text from stdin: pipe one text (or turn) per line")
    if jsonl and role:
        raise InvalidInputError("--jsonl turns carry their own role; leave out --role")
    if jsonl:
        payload: Any = jsonl_turns(texts)
    else:
        payload = [{"role": role, "content": t} for t in texts] if role else (texts[0] if len(texts) == 1 else texts)
    memory = state.memory()
    scope = scope_args(user, agent, session)
    # With --infer --wait the job runs here, under a live progress line, instead of inside add().
    when = parse_time_option(event_time, "event-time")
    options: dict[str, Any] = {"infer": True} if infer else {"kind": kind, "key": key, "event_time": when}
    if infer and (kind or key or when):
        raise InvalidInputError("--kind, --key and --event-time apply to plain texts; with --infer the model "
                                "decides them")  # fmt: skip
    check_kinds(memory, [kind] if kind else None, scope, adding=True)
    failure: JobFailedError | None = None
    result = memory.add(payload, **scope, metadata=parse_json_option(metadata, "metadata"), actor="cli",
                        **options)  # fmt: skip
    job_ids = {result.job_id}
    if infer and wait:
        try:
            with job_progress(quiet=state.json) as hook:
                memory.flush(**scope, progress=hook)
        except JobFailedError as exc:  # the turns are stored; show the failed job, then exit non-zero
            failure = exc
            job_ids |= {job.id for job in exc.jobs}
    jobs = [job for job in memory.list_jobs(**scope, limit=10_000) if job.id in job_ids]
    if state.json:
        print_json({**result.model_dump(mode="json"), "jobs": to_jsonable(jobs)})
    else:
        for event in result.results:
            console.print(f"[green]{event.event}[/green] {event.id}  {escape(event.memory)}", highlight=False)
        if not result.results and not jobs and isinstance(payload, list):  # every turn was stored before
            console.print(f"nothing new: the {len(payload)} turn(s) were stored already (same ids)", highlight=False)
        for note in result.notes:
            err_console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)
        for job in jobs:
            console.print(jobs_table([job]))
            for decision in job.result.get("decisions", []):
                console.print(decision_line(decision), highlight=False)
    if failure is not None:
        raise failure


Mode = Literal["fast", "deep"]


@app.command()
def search(
    ctx: typer.Context,
    query: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-k")] = 10,
    kind: Annotated[list[str] | None, typer.Option(help="only these kinds")] = None,
    threshold: Annotated[
        float | None, typer.Option(help="minimum relevance 0..1 (default search.min_relevance)")
    ] = None,
    filters: Annotated[str | None, typer.Option(help='JSON filters, e.g. \'{"metadata": {"topic": "x"}}\'')] = None,
    mode: Annotated[Mode, typer.Option(help="deep: understand, expand and re-search with the model (slower)")] = "fast",
    as_of: Annotated[
        str | None, typer.Option(help="time travel: what was true then (ISO 8601, e.g. 2025-03-01)")
    ] = None,
    known_at: Annotated[str | None, typer.Option(help="time travel: what the store held then (ISO 8601)")] = None,
) -> None:
    """Hybrid keyword + vector search within a scope (--mode deep: with query understanding and expansion)."""
    state = cli_state(ctx)
    parsed = parse_json_option(filters, "filters") or {}
    valid_at, held_at = parse_time_option(as_of, "as-of"), parse_time_option(known_at, "known-at")
    if mode == "deep" and (valid_at or held_at):
        raise InvalidInputError("--as-of and --known-at apply to fast search; leave out --mode deep")
    if kind:
        parsed["kind"] = kind
        check_kinds(state.memory(), kind, scope_args(user, agent, session))
    scope = scope_args(user, agent, session)
    if mode == "deep":
        result = state.memory().deep_search(query, **scope, limit=limit, filters=parsed, threshold=threshold)
        hits, trace = result.hits, result.trace
    else:
        found = state.memory().search(
            query, **scope, limit=limit, filters=parsed, threshold=threshold, as_of=valid_at, known_at=held_at
        )
        hits, trace = found, None
    if state.json:
        print_json(hits)
        return
    console.print(hits_table(hits, query))
    if trace is not None:
        tokens = trace.prompt_tokens + trace.completion_tokens
        console.print(f"deep: {escape(repr(trace.understanding.question))}, {len(trace.rounds)} round(s), stopped: "
                      f"{trace.stopped}, {trace.model_calls} model call(s), {tokens} tokens, {trace.seconds:.1f} s",
                      highlight=False)  # fmt: skip


@app.command()
def context(
    ctx: typer.Context,
    query: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    budget: Annotated[int, typer.Option("--budget", help="most tokens of text")] = 2000,
    mode: Annotated[Mode, typer.Option(help="how the relevant memories are found")] = "fast",
    as_of: Annotated[
        str | None, typer.Option(help="time travel: what was true then (ISO 8601, e.g. 2025-03-01)")
    ] = None,
) -> None:
    """What an agent should read for QUERY: rules, key facts, the user's standing facts, relevant memories with
    sources, session turns."""
    state = cli_state(ctx)
    valid_at = parse_time_option(as_of, "as-of")
    built = state.memory().context(
        query, **scope_args(user, agent, session), budget_tokens=budget, mode=mode, as_of=valid_at
    )
    if state.json:
        print_json(built)
        return
    console.print(built.text, highlight=False, markup=False)
    cited = counted(len(built.citations), "memory", "memories")
    console.print(f"[dim]{built.tokens}/{built.budget_tokens} tokens, {cited} cited, "
                  f"{built.left_out} left out, {built.seconds:.2f} s[/dim]")  # fmt: skip


@app.command("list")
def list_(
    ctx: typer.Context,
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
    state = cli_state(ctx)
    filters: dict[str, Any] = {}
    if kind:
        filters["kind"] = kind
        check_kinds(state.memory(), kind, scope_args(user, agent, session))
    if status:
        filters["status"] = status
    items = state.memory().get_all(
        **scope_args(user, agent, session),
        filters=filters,
        limit=limit,
        offset=offset,
        order_by=order_by,  # type: ignore[arg-type]
    )
    print_json(items) if state.json else console.print(memories_table(items))


@app.command()
def show(ctx: typer.Context, memory_id: IdArg, user: UserOpt = None, agent: AgentOpt = None,
         session: SessionOpt = None) -> None:  # fmt: skip
    """Show one memory with every field."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    item = state.memory().get(state.memory().resolve_id(memory_id, **scope), **scope)
    print_json(item) if state.json else console.print(memory_detail(item))


@app.command()
def history(ctx: typer.Context, memory_id: IdArg, user: UserOpt = None, agent: AgentOpt = None,
            session: SessionOpt = None) -> None:  # fmt: skip
    """Every change made to a memory: ADD, UPDATE, DELETE with old and new text."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    full_id = state.memory().resolve_id(memory_id, **scope)
    events = state.memory().history(full_id, **scope)
    print_json(events) if state.json else console.print(history_table(events, of=full_id))


@app.command()
def update(
    ctx: typer.Context,
    memory_id: IdArg,
    text: Annotated[str | None, typer.Argument()] = None,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    metadata: Annotated[str | None, typer.Option(help="JSON object merged into metadata")] = None,
    reason: str | None = None,
) -> None:
    """Change a memory's text and/or metadata; history keeps the old text."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    memory_id = state.memory().resolve_id(memory_id, **scope)
    before = state.memory().get(memory_id, **scope)
    item = state.memory().update(memory_id, text, metadata=parse_json_option(metadata, "metadata"), reason=reason,
                                 actor="cli", **scope)  # fmt: skip
    verb = "[yellow]UPDATE[/yellow]" if item.updated_at != before.updated_at else "[dim]UNCHANGED[/dim]"
    print_json(item) if state.json else console.print(f"{verb} {item.id}  {escape(item.text)}")


@app.command()
def delete(
    ctx: typer.Context,
    memory_id: IdArg,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    reason: str | None = None,
    purge: Annotated[bool, typer.Option(help="remove the rows for good instead of a soft delete")] = False,
) -> None:
    """Soft-delete a memory (or --purge it)."""
    state = cli_state(ctx)
    memory = state.memory()
    memory_id = memory.resolve_id(memory_id, **scope_args(user, agent, session))
    if purge:
        memory.purge(memory_id, **scope_args(user, agent, session))
        print_json({"purged": memory_id}) if state.json else console.print(f"[red]PURGED[/red] {memory_id}")
        return
    before = memory.get(memory_id, **scope_args(user, agent, session))
    item = memory.delete(memory_id, **scope_args(user, agent, session), actor="cli", reason=reason)
    verb = "[red]DELETE[/red]" if item.updated_at != before.updated_at else "[dim]ALREADY DELETED[/dim]"
    print_json(item) if state.json else console.print(f"{verb} {item.id}  {escape(item.text)}")


@app.command("export")
def export_(ctx: typer.Context, path: Path) -> None:
    """Write the whole store (memories, vectors, history, raw turns) to a JSONL file."""
    state = cli_state(ctx)
    lines = state.memory().export_jsonl(path)
    print_json({"path": str(path), "lines": lines}) if state.json else console.print(f"wrote {lines} lines to {path}")


@app.command("import")
def import_(ctx: typer.Context, path: Path) -> None:
    """Load a JSONL export into this store (all or nothing); what the store already holds is skipped (merge)."""
    state = cli_state(ctx)
    if not path.is_file():
        raise InvalidInputError(f"{path} is not a file; pass the path of a `memstrata export` file")
    report = state.memory().import_jsonl(path)
    if state.json:
        print_json(vars(report))
        return
    console.print(
        f"imported {report.memories} memories from {escape(str(path))}; {report.already_there} records were already "
        f"in the store (skipped), {report.kept_stored} memories changed since the export kept their stored version",
        highlight=False,
    )


@app.command()
def stats(ctx: typer.Context, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None) -> None:
    """Counts by status and kind, raw turns, history, vectors, file size."""
    state = cli_state(ctx)
    result = state.memory().stats(**scope_args(user, agent, session))
    print_json(vars(result)) if state.json else console.print(key_values(vars(result), title="store"))


@app.command()
def reindex(ctx: typer.Context, batch_size: int = 256) -> None:
    """Embed every memory that lacks a vector of the configured embedding model, and rebuild a keyword index
    an earlier memstrata built."""
    state = cli_state(ctx)
    memory = state.memory()
    terms = 0
    with progress_bar("keyword index", total=None, quiet=state.json) as advance:
        for count in memory.admin.rebuild_keyword_index():
            terms += count
            advance(count)
    total = 0
    with progress_bar("re-embedding", total=None, quiet=state.json) as advance:
        for count in memory.reindex(batch_size=batch_size):
            total += count
            advance(count)
    if state.json:
        print_json({"reindexed": total, "keyword_index_rebuilt": terms})
    else:
        console.print(f"re-embedded {total} memories" + (f"; keyword terms of {terms} rebuilt" if terms else ""))


@app.command()
def jobs(
    ctx: typer.Context,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    status: Annotated[list[str] | None, typer.Option(help="waiting, queued, running, done, failed")] = None,
    retry: Annotated[str | None, typer.Option(help="queue this failed job again (its id, or a unique prefix)")] = None,
    flush: Annotated[bool, typer.Option(help="run every pending job now")] = False,
    limit: int = 50,
) -> None:
    """The extraction queue: status, failures (with the model's raw output), retry, flush."""
    state = cli_state(ctx)
    memory = state.memory()
    scope = scope_args(user, agent, session)
    failure: JobFailedError | None = None
    if retry:
        memory.retry_job(memory.resolve_id(retry, what="job", **scope))
    if flush or retry:
        try:
            memory.flush(**scope)
        except JobFailedError as exc:
            failure = exc
    found = memory.list_jobs(**scope, status=status or (), limit=limit)
    print_json(found) if state.json else console.print(jobs_table(found))
    if failure is not None:
        raise failure


app.command()(doctor)


@app.command()
def demo(
    db: Annotated[Path | None, typer.Option(help="store for the walkthrough (default: a temporary file)")] = None,
) -> None:
    """A bilingual walkthrough: add, cross-lingual search, update, delete, history."""
    from memstrata.cli.demo import run_demo

    run_demo(db)
