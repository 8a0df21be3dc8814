"""Memory lifecycles: review, confirm, reject, archive, restore, maintain, forget, erase-user."""

from __future__ import annotations

from typing import Annotated

import typer

from memstrata.cli.context import AgentOpt, IdArg, SessionOpt, UserOpt, cli_state, scope_args
from memstrata.cli.render import console, err_console, escape, key_values, memories_table, print_json
from memstrata.errors import InvalidInputError

app = typer.Typer()


@app.command()
def review(ctx: typer.Context, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None,
           limit: int = 100) -> None:  # fmt: skip
    """Pending memories (low-confidence extractions) waiting to be confirmed or rejected."""
    state = cli_state(ctx)
    items = state.memory().lifecycle.review_queue(**scope_args(user, agent, session), limit=limit)
    print_json(items) if state.json else console.print(memories_table(items, title="pending review"))


def _status_command(name: str, help_text: str) -> None:
    def command(ctx: typer.Context, memory_id: IdArg, user: UserOpt = None, agent: AgentOpt = None,
                session: SessionOpt = None) -> None:  # fmt: skip
        state = cli_state(ctx)
        scope = scope_args(user, agent, session)
        action = getattr(state.memory().lifecycle, name)
        item = action(state.memory().resolve_id(memory_id, **scope), actor="cli", **scope)
        message = f"{name.upper()} {item.id}  [{item.status.value}] {item.text}"
        print_json(item) if state.json else console.print(message, highlight=False, markup=False)

    command.__doc__ = help_text
    app.command(name)(command)


_status_command("confirm", "Confirm a pending memory: it becomes active.")
_status_command("reject", "Reject a pending memory: it is deleted; its history records who rejected it and when.")
_status_command("archive", "Move an active memory to cold storage (out of default search).")
_status_command("restore", "Bring an archived memory back into search.")


@app.command()
def maintain(ctx: typer.Context) -> None:
    """Expire stale pending facts, archive idle memories, hand idle sessions to the write path."""
    state = cli_state(ctx)
    report = state.memory().lifecycle.maintain()
    print_json(vars(report)) if state.json else console.print(key_values(vars(report), title="maintenance"))


@app.command()
def forget(
    ctx: typer.Context,
    what: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="delete the matches (without it: a preview)")] = False,
) -> None:
    """Find memories about WHAT; with --yes, soft-delete them with the request recorded in history."""
    state = cli_state(ctx)
    result = state.memory().lifecycle.forget(what, confirm=yes, actor="cli", **scope_args(user, agent, session))
    if state.json:
        print_json({"deleted": result.deleted, "matched": result.matched})
        return
    title = "forgotten" if result.deleted else "would forget (run again with --yes)"
    console.print(memories_table(result.matched, title=title))


@app.command("erase-user")
def erase_user(
    ctx: typer.Context,
    user: Annotated[str, typer.Argument(help="the user_id whose data is removed for good")],
    yes: Annotated[bool, typer.Option("--yes", help="required: this cannot be undone")] = False,
) -> None:
    """Remove everything about a user (memories, raw turns, history, vectors, cache) and verify it."""
    state = cli_state(ctx)
    if not yes:
        raise InvalidInputError(f"erase-user removes everything about {user} for good; add --yes to confirm")
    report = state.memory().admin.erase_user(user, confirm=True)
    if not any(report.deleted.values()):  # a user of another tenant looks like one with nothing stored
        where = f"tenant {state.tenant!r}" if state.tenant is not None else "the default tenant"
        err_console.print(f"[yellow]nothing stored for {escape(user)} in {where}[/yellow]: a user of the service is "
                          "in its key's tenant (--tenant NAME)", highlight=False)  # fmt: skip
    if state.json:
        print_json(vars(report))
        return
    console.print(key_values({"deleted": report.deleted, "remaining": report.remaining}, title=f"erased {user}"))
