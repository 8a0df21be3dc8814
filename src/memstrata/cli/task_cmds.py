"""``memstrata task ...``: recorded tasks, their step trees (as text or Mermaid) and the mined strategies."""

from __future__ import annotations

from typing import Annotated

import typer

from memstrata.cli.context import AgentOpt, IdArg, SessionOpt, UserOpt, cli_state, scope_args
from memstrata.cli.render import Table, console, key_values, print_json
from memstrata.records.process import Strategy, Task

app = typer.Typer(help="Process memory: tasks, their step trees, and the strategy library.", no_args_is_help=True)


def _short(text: str | None, width: int = 70) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _tasks_table(tasks: list[Task]) -> Table:
    table = Table(title=f"{len(tasks)} tasks")
    for column in ("id", "type", "status", "goal", "outcome", "started"):
        table.add_column(column, overflow="fold")
    for task in tasks:
        table.add_row(task.id[:12], task.task_type, task.status.value, _short(task.goal), _short(task.outcome, 50),
                      f"{task.started_at:%Y-%m-%d %H:%M}")  # fmt: skip
    return table


def _strategies_table(strategies: list[Strategy]) -> Table:
    table = Table(title=f"{len(strategies)} strategies")
    for column in ("type", "steps", "confidence", "wins", "fails", "keywords", "expected outcome"):
        table.add_column(column, overflow="fold")
    for strategy in strategies:
        keywords = ", ".join(strategy.trigger.get("keywords", []))
        table.add_row(strategy.task_type, " → ".join(strategy.actions), f"{strategy.confidence:.2f}",
                      str(strategy.successes), str(strategy.failures), keywords,
                      _short(strategy.expected_outcome, 50))  # fmt: skip
    return table


@app.command("list")
def list_tasks(
    ctx: typer.Context,
    status: Annotated[list[str] | None, typer.Option("--status", help="running, succeeded, failed, abandoned")] = None,
    task_type: Annotated[list[str] | None, typer.Option("--type", help="only tasks of this type")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 50,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Recorded tasks of a scope, newest first."""
    state = cli_state(ctx)
    found = state.memory().tasks.list(status=status or (), task_type=task_type or (), limit=limit,
                                      **scope_args(user, agent, session))  # fmt: skip
    print_json(found) if state.json else console.print(_tasks_table(found))


@app.command("show")
def show(
    ctx: typer.Context, task_id: IdArg, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None
) -> None:
    """One task: goal, outcome, summary, its step tree, hypotheses and artifacts."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    tasks = state.memory().tasks
    tree = tasks.tree(tasks.resolve_id(task_id, **scope), **scope)
    if state.json:
        print_json(tree)
        return
    task = tree.task
    console.print(key_values({"id": task.id, "type": task.task_type, "status": task.status.value, "goal": task.goal,
                              "context": task.context, "constraints": list(task.constraints), "outcome": task.outcome,
                              "summary": task.summary, "summary by": task.summary_source,
                              "compressed": task.compressed, "steps": len(tree.steps),
                              "started": f"{task.started_at:%Y-%m-%d %H:%M:%S}",
                              "ended": f"{task.ended_at:%Y-%m-%d %H:%M:%S}" if task.ended_at else None},
                             title=f"task {task.id[:12]}"))  # fmt: skip
    console.print(tasks.render(task.id, **scope), highlight=False, markup=False)
    for artifact in tree.artifacts:
        console.print(f"artifact {artifact.name}: {_short(artifact.text or artifact.uri, 100)}", markup=False)


@app.command("tree")
def tree(
    ctx: typer.Context,
    task_id: IdArg,
    mermaid: Annotated[bool, typer.Option("--mermaid", help="a Mermaid flowchart instead of indented text")] = False,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """A task's step tree: indented text, or Mermaid (paste into any Markdown viewer that draws it)."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    tasks = state.memory().tasks
    print(tasks.render(tasks.resolve_id(task_id, **scope), "mermaid" if mermaid else "text", **scope))


@app.command("strategies")
def strategies(
    ctx: typer.Context,
    context: Annotated[str | None, typer.Option("--context", "-c", help="a goal or situation to match")] = None,
    task_type: Annotated[str | None, typer.Option("--type", help="only strategies for this task type")] = None,
    min_confidence: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="default: \\[process] setting")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 10,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
) -> None:
    """Strategies mined from finished tasks: steps, success rate, counter-examples."""
    state = cli_state(ctx)
    scope = scope_args(user, agent, session)
    found = state.memory().tasks.strategies(context=context, task_type=task_type, limit=limit,
                                            min_confidence=min_confidence, **scope)  # fmt: skip
    print_json(found) if state.json else console.print(_strategies_table(found))
