"""The ``memstrata`` command line: translate arguments, call the Memory facade, render.

The root app holds the global options (``--db``, ``--config``, ``--json``, ``-v``) in typer's
context; each command group lives in its own module as a typer app and is composed here. Errors
print one line that says what to do and exit with status 2 (bad input) or 1 (anything else).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from memstrata.cli import (
    graph_cmds,
    ingest_cmds,
    lifecycle_cmds,
    memory_cmds,
    service_cmds,
    storage_cmds,
    task_cmds,
    ui_cmds,
    vault_cmds,
)
from memstrata.cli.context import CliState, configure_logging
from memstrata.cli.render import err_console, escape
from memstrata.errors import InvalidInputError, MemstrataError

app = typer.Typer(
    name="memstrata",
    help="Layered long-term memory for LLM agents.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


# Commands that only read the store: on a --db path that does not exist they refuse instead of creating it.
READS = frozenset(
    {"search", "context", "list", "show", "history", "export", "stats", "jobs", "graph", "collections", "doctor"}
)


@app.callback()
def _global(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option("--db", help="SQLite file (default: user data dir), or a postgresql:// URL"),
    ] = None,
    config: Annotated[Path | None, typer.Option("--config", help="memstrata.toml to read")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="-v info logs, -vv debug")] = 0,
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant",
            envvar="MEMSTRATA_TENANT",
            help="act inside this tenant: what the service's keys of that tenant stored (default: the "
            "local default tenant)",
        ),
    ] = None,
) -> None:
    configure_logging(verbose)
    # a str, not a Path: Path("postgresql://h/db") folds the "//" and the URL no longer opens PostgreSQL
    if db is not None and ctx.invoked_subcommand in READS and "://" not in db and not Path(db).expanduser().exists():
        # a mistyped path would quietly create an empty store and answer "nothing found"
        raise InvalidInputError(f"no store at {db}; check the path (a command that writes creates it)")
    state = CliState(db=db, config=config, json=as_json, tenant=tenant)
    ctx.obj = state
    ctx.call_on_close(state.close)


for group in (memory_cmds.app, lifecycle_cmds.app, ingest_cmds.app, service_cmds.app, storage_cmds.app, ui_cmds.app):
    app.add_typer(group)
app.add_typer(graph_cmds.app, name="graph")
app.add_typer(vault_cmds.app, name="vault")
app.add_typer(task_cmds.app, name="task")
app.add_typer(service_cmds.keys_app, name="keys")
app.add_typer(ingest_cmds.collections_app, name="collections")


def _fail(exc: Exception, code: int) -> None:
    """One line on stderr, and the exit code; with --json the line is a JSON object a script can parse."""
    if "--json" in sys.argv[1:]:
        print(json.dumps({"error": str(exc), "type": type(exc).__name__, "exit_code": code}, ensure_ascii=False),
              file=sys.stderr)  # fmt: skip
    else:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    sys.exit(code)


def _global_flags_first(args: list[str]) -> list[str]:
    """``memstrata search x --json`` as ``memstrata --json search x``: --json is the root's option, and typer
    refused it after the command ("No such option"), where scripts most often put it. Not after ``--``."""
    end = args.index("--") if "--" in args else len(args)
    if "--json" not in args[1:end]:
        return args
    return ["--json", *[arg for arg in args[:end] if arg != "--json"], *args[end:]]


def main() -> None:
    try:
        # standalone_mode=False: a command's typer.Exit(n) comes back as n, not as an exception
        code = app(args=_global_flags_first(sys.argv[1:]), standalone_mode=False)
    except MemstrataError as exc:
        _fail(exc, 2 if isinstance(exc, InvalidInputError) else 1)
    except typer.Abort:
        sys.exit(130)
    except OSError as exc:  # a file the command was given cannot be read or written: say which, no traceback
        _fail(exc, 1)
    except Exception as exc:  # click usage errors carry their own exit code
        code = getattr(exc, "exit_code", None)
        show = getattr(exc, "show", None)
        if code is not None and callable(show):
            show()
            sys.exit(code)
        raise
    if isinstance(code, int) and code:
        sys.exit(code)
