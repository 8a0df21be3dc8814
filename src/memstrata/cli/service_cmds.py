"""CLI commands that run memstrata as a service (registered on the main app when imported).

``serve`` (REST + MCP over HTTP), ``mcp`` (MCP over stdio) and ``keys create|list|revoke``. The
server packages are imported inside the commands, so the rest of the CLI works without the
``server`` extra.
"""

from __future__ import annotations

import logging
import os
import socket
from typing import Annotated

import typer

from memstrata.cli.context import cli_state
from memstrata.cli.render import console, err_console, print_json
from memstrata.errors import InvalidInputError
from memstrata.types import Scope
from memstrata.validation import parse_model

app = typer.Typer()
keys_app = typer.Typer(help="API keys of the service: each bound to a tenant and to allowed user / agent ids.")


def _need_server_extra() -> None:
    try:
        import fastapi  # noqa: F401
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise InvalidInputError(
            f"the service needs the server extra ({exc.name} is missing): pip install 'memstrata[server]'"
        ) from None


SERVE_EPILOG = (
    "Which store: the global options before the command, e.g. `memstrata --db ~/notes.db serve` (a SQLite file) "
    "or `memstrata --config memstrata.toml serve` (store.path may be a postgresql:// URL); MEMSTRATA_STORE__PATH "
    "works too. Default: memstrata.db in the user data directory. API keys: `memstrata keys create --tenant "
    "NAME`, kept in keys.db beside a SQLite store (in the user data directory for PostgreSQL) unless --keys or "
    "server.keys_path says otherwise. Every \\[server] "
    "setting (host, port, max_request_bytes, allow_anonymous_loopback) can be set in the config file or as "
    "MEMSTRATA_SERVER__*. Keyless mode answers only loopback host names and refuses requests a web page could "
    "send (see docs/server.md)."
)


@app.command(epilog=SERVE_EPILOG)
def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="interface to bind (default: server.host, 127.0.0.1)")] = None,
    port: Annotated[int | None, typer.Option(help="TCP port (default: server.port, 8765)")] = None,
    keys_path: Annotated[
        str | None,
        typer.Option("--keys", help="API-key file (default: server.keys_path, or keys.db beside a SQLite store)"),
    ] = None,
    allow_anonymous_loopback: Annotated[
        bool | None,
        typer.Option(
            "--allow-anonymous-loopback/--require-keys",
            help="accept requests without a key from this machine (loopback host only)",
        ),
    ] = None,
    access_log: Annotated[
        bool | None,
        typer.Option("--access-log/--no-access-log", help="a line per request (default: server.access_log, off)"),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="processes answering on the port, one per core at most (default: "
            "server.workers, 1); each loads its own embedder",
        ),
    ] = None,
) -> None:
    """Serve the REST API (/v1, docs at /docs) and MCP over streamable HTTP (/mcp) on the configured store."""
    _need_server_extra()
    import uvicorn

    from memstrata.api.keys import KeyStore
    from memstrata.service.app import create_app, ready_to_serve, uvicorn_options
    from memstrata.service.workers import serve_workers, worker_plan

    state = cli_state(ctx)
    overrides = {
        "host": host,
        "port": port,
        "keys_path": keys_path,
        "allow_anonymous_loopback": allow_anonymous_loopback,
        "workers": workers,
        "access_log": access_log,
    }
    server = state.settings().server.model_copy(update={k: v for k, v in overrides.items() if v is not None})
    check_port_free(server.host, server.port)  # before the model and the store are loaded: fail in a second
    memory = state.memory()
    keys = KeyStore(server.keys_file(memory.settings.store.path))
    try:
        application = create_app(memory, server, keys=keys)
        active = len(keys.list_keys())
        err_console.print(
            f"memstrata on http://{server.host}:{server.port}  (console /, REST /v1, docs /docs, MCP /mcp)\n"
            f"store {memory.store.location}; {active} API keys in {keys.path}"
            + ("; anonymous loopback access ON" if server.allow_anonymous_loopback else ""),
            highlight=False,
        )
        if "OPENBLAS_NUM_THREADS" not in os.environ:
            err_console.print(
                "[yellow]tip:[/yellow] start with OPENBLAS_NUM_THREADS=1 (as `make run` does): concurrent requests "
                "then do not fight over BLAS threads, and tail latency under load drops about tenfold"
            )
        if active == 0 and not server.allow_anonymous_loopback:
            err_console.print("[yellow]no API keys yet:[/yellow] `memstrata keys create --tenant NAME` makes one")
        if server.workers == 1:
            ready_to_serve(memory)
            uvicorn.run(application, host=server.host, port=server.port, log_level="info", **uvicorn_options(server))
            return
        # Opened here first so the schema is migrated and the settings checked once; each worker opens its own.
        plan = worker_plan(memory.settings.model_dump(mode="json"), server, keys.path, state.tenant,
                           logging.getLogger().getEffectiveLevel())  # fmt: skip
        keys.close()
        state.close()
        err_console.print(f"{server.workers} worker processes, each with its own embedder", highlight=False)
        status = serve_workers(plan, server.workers)
        if status:
            err_console.print("[red]a worker process ended on its own[/red] (its error is above); the others were "
                              "stopped. Fix the cause and start the service again.")  # fmt: skip
            raise typer.Exit(status)
    finally:
        keys.close()  # the Memory is closed with the command's context


@app.command("mcp")
def mcp_stdio(
    ctx: typer.Context,
    tenant: Annotated[
        str | None, typer.Option(help="act inside this tenant (default: the local default tenant)")
    ] = None,
    user: Annotated[str | None, typer.Option("--user", "-u", help="the only user_id the tools may use")] = None,
    agent: Annotated[str | None, typer.Option("--agent", "-a", help="the only agent_id the tools may use")] = None,
) -> None:
    """Serve MCP over stdio, for Claude Desktop, Cursor and other local MCP clients."""
    _need_server_extra()
    from memstrata.api.principal import Principal
    from memstrata.mcp_server.server import run_stdio

    # checked as a scope holds them: with a blank --tenant "" the server started, then every tool call failed
    checked = parse_model(Scope, {"user_id": user if user is not None else "-", "agent_id": agent, "tenant_id": tenant},
                          what="--tenant / --user / --agent")  # fmt: skip
    principal = Principal(
        tenant_id=checked.tenant_id,
        user_ids=frozenset([checked.user_id]) if user is not None and checked.user_id else None,
        agent_ids=frozenset([checked.agent_id]) if checked.agent_id else None,
    )
    run_stdio(cli_state(ctx).memory(), principal)


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    tenant: Annotated[str, typer.Option(help="the tenant this key acts in; it can reach nothing else")],
    user: Annotated[
        list[str] | None, typer.Option("--user", "-u", help="allowed user_id (repeat; default all)")
    ] = None,
    agent: Annotated[
        list[str] | None, typer.Option("--agent", "-a", help="allowed agent_id (repeat; default all)")
    ] = None,
    name: Annotated[str, typer.Option(help="a label, e.g. who holds the key")] = "",
) -> None:
    """Create an API key. The token is printed once; only its hash is stored."""
    from memstrata.api.keys import KeyStore

    state = cli_state(ctx)
    settings = state.settings()
    keys = KeyStore(settings.server.keys_file(settings.store.path))
    try:
        key, token = keys.create(tenant, user_ids=user or None, agent_ids=agent or None, name=name)
    finally:
        keys.close()
    if state.json:
        print_json({**key.model_dump(mode="json"), "token": token})
        return
    console.print(f"created key [bold]{key.id}[/bold] for tenant {key.tenant_id}", highlight=False)
    console.print(f"users: {_ids(key.user_ids)}   agents: {_ids(key.agent_ids)}", highlight=False)
    console.print("token (shown only now; send it as 'Authorization: Bearer <token>'):", highlight=False)
    print(token)


@keys_app.command("list")
def keys_list(
    ctx: typer.Context, all_: Annotated[bool, typer.Option("--all", help="include revoked keys")] = False
) -> None:
    """List API keys (never their secrets)."""
    from memstrata.api.keys import KeyStore
    from memstrata.cli.render import Table

    state = cli_state(ctx)
    settings = state.settings()
    keys = KeyStore(settings.server.keys_file(settings.store.path))
    try:
        found = keys.list_keys(include_revoked=all_)
    finally:
        keys.close()
    if state.json:
        print_json(found)
        return
    table = Table(title=f"API keys ({keys.path})")
    for column in ("id", "name", "tenant", "users", "agents", "created", "revoked"):
        table.add_column(column, overflow="fold")
    for key in found:
        revoked = key.revoked_at.strftime("%Y-%m-%d %H:%M") if key.revoked_at else ""
        table.add_row(
            key.id,
            key.name,
            key.tenant_id,
            _ids(key.user_ids),
            _ids(key.agent_ids),
            key.created_at.strftime("%Y-%m-%d %H:%M"),
            revoked,
        )
    console.print(table)


@keys_app.command("revoke")
def keys_revoke(ctx: typer.Context, key_id: str) -> None:
    """Revoke an API key; a running server refuses it from the next request on."""
    from memstrata.api.keys import KeyStore

    state = cli_state(ctx)
    settings = state.settings()
    keys = KeyStore(settings.server.keys_file(settings.store.path))
    try:
        key = keys.revoke(key_id)
    finally:
        keys.close()
    print_json(key) if state.json else console.print(f"revoked {key.id} (tenant {key.tenant_id})", highlight=False)


def check_port_free(host: str, port: int) -> None:
    """A busy port is a clear error, not uvicorn's bare "[Errno 98]" after everything has been loaded."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: TIME_WAIT is not "busy"
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            raise InvalidInputError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc} (another memstrata serve, or another "
                f"program, may hold the port); pass --port with a free port, or stop the other process"
            ) from None


def _ids(ids: tuple[str, ...] | None) -> str:
    return "all" if ids is None else ", ".join(ids)
