"""CLI commands for memory lifecycles: review, confirm, reject, archive, restore, maintain, forget, erase."""

from __future__ import annotations

from typing import Annotated

import typer

from memstrata.cli.app import AgentOpt, SessionOpt, UserOpt, app, scope_args, state
from memstrata.cli.render import console, memories_table, print_json


@app.command()
def review(user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None, limit: int = 100) -> None:
    """Pending memories (low-confidence extractions) waiting to be confirmed or rejected."""
    items = state.memory().review_queue(**scope_args(user, agent, session), limit=limit)
    print_json(items) if state.json else console.print(memories_table(items, title="pending review"))


def _status_command(name: str, help_text: str) -> None:
    def command(memory_id: str, user: UserOpt = None, agent: AgentOpt = None, session: SessionOpt = None) -> None:
        item = getattr(state.memory(), name)(memory_id, **scope_args(user, agent, session))
        print_json(item) if state.json else console.print(
            f"{name.upper()} {item.id}  [{item.status.value}] {item.text}"
        )

    command.__doc__ = help_text
    app.command(name)(command)


_status_command("confirm", "Confirm a pending memory: it becomes active.")
_status_command("reject", "Reject a pending memory: it is deleted, with the reason in history.")
_status_command("archive", "Move an active memory to cold storage (out of default search).")
_status_command("restore", "Bring an archived memory back into search.")


@app.command()
def maintain() -> None:
    """Expire stale pending facts, archive idle memories, hand idle sessions to the write path."""
    report = state.memory().maintain()
    print_json(vars(report)) if state.json else console.print(vars(report))


@app.command()
def forget(
    what: str,
    user: UserOpt = None,
    agent: AgentOpt = None,
    session: SessionOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="delete the matches (without it: a preview)")] = False,
) -> None:
    """Find memories about WHAT; with --yes, soft-delete them with the request recorded in history."""
    result = state.memory().forget(what, **scope_args(user, agent, session), confirm=yes)
    if state.json:
        print_json({"deleted": result.deleted, "matched": result.matched})
        return
    title = "forgotten" if result.deleted else "would forget (run again with --yes)"
    console.print(memories_table(result.matched, title=title))


@app.command("erase-user")
def erase_user(
    user: Annotated[str, typer.Argument(help="the user_id whose data is removed for good")],
    yes: Annotated[bool, typer.Option("--yes", help="required: this cannot be undone")] = False,
) -> None:
    """Remove everything about a user (memories, raw turns, history, vectors, cache) and verify it."""
    report = state.memory().erase_user(user, confirm=yes)
    print_json(vars(report)) if state.json else console.print(
        f"erased {user}: {report.deleted}; left: {report.remaining}"
    )
