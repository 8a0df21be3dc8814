"""``memstrata ui``: open the web console of the service (registered on the main app by cli/app.py).

When a memstrata service already answers at the configured address, the command prints its console URL and
opens a browser where there is a display. Otherwise it starts the service in this process (as ``memstrata
serve`` does) and opens the console once the service answers.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import webbrowser
from typing import Annotated

import typer

from memstrata.cli import service_cmds
from memstrata.cli.context import cli_state
from memstrata.cli.render import console, err_console
from memstrata.errors import InvalidInputError

app = typer.Typer()
WAIT_FOR_SERVICE_S = 120.0  # loading the embedder on a cold machine takes a while


def console_url(host: str, port: int) -> str:
    """The address a browser on this machine uses: a wildcard bind is reached through loopback."""
    reachable = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
    if ":" in reachable and not reachable.startswith("["):
        reachable = f"[{reachable}]"
    return f"http://{reachable}:{port}/"


def service_answers(url: str) -> bool:
    """True when a memstrata service (its /health says ok) listens at ``url``."""
    import httpx  # here, not at import: ~70 ms of every command's start-up

    try:
        response = httpx.get(url + "health", timeout=2.0)
        return response.status_code == 200 and response.json().get("status") == "ok"
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def has_display() -> bool:
    """A browser can be shown: macOS and Windows always, elsewhere only with an X11 or Wayland display."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _show(url: str, open_browser: bool) -> None:
    console.print(f"memstrata console: {url}", highlight=False)
    if open_browser and has_display():
        webbrowser.open(url)
    elif open_browser:
        err_console.print("no display here: open the address above in a browser on this machine", highlight=False)


def _show_when_ready(url: str, open_browser: bool) -> None:
    deadline = time.monotonic() + WAIT_FOR_SERVICE_S
    while time.monotonic() < deadline:
        if service_answers(url):
            _show(url, open_browser)
            return
        time.sleep(0.3)


@app.command()
def ui(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help="where the service listens (default: server.host)")] = None,
    port: Annotated[int | None, typer.Option(help="its port (default: server.port, 8765)")] = None,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="open a browser (when there is a display)")
    ] = True,
    serve: Annotated[
        bool, typer.Option("--serve/--no-serve", help="start the service here when none answers at that address")
    ] = True,
    allow_anonymous_loopback: Annotated[
        bool | None,
        typer.Option(
            "--allow-anonymous-loopback/--require-keys",
            help="when it starts the service: accept this machine's requests without a key (loopback host only)",
        ),
    ] = None,
) -> None:
    """Open the web console: read, review, correct and forget what agents remember, in a browser."""
    settings = cli_state(ctx).settings().server
    host = host if host is not None else settings.host
    port = port if port is not None else settings.port
    url = console_url(host, port)
    if service_answers(url):
        _show(url, open_browser)
        return
    if not serve:
        raise InvalidInputError(f"no memstrata service answers at {url}; start one with `memstrata serve`")
    err_console.print(f"starting the service on {host}:{port} (Ctrl+C stops it) ...", highlight=False)
    threading.Thread(target=_show_when_ready, args=(url, open_browser), daemon=True, name="open-console").start()
    service_cmds.serve(ctx, host=host, port=port, allow_anonymous_loopback=allow_anonymous_loopback)
