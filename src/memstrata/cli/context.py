"""What every command shares, passed explicitly through typer's context (no module-level state): the
global options, the settings they select, and the Memory opened once per invocation."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.logging import RichHandler

from memstrata.cli.render import err_console, escape
from memstrata.config import Settings, load_settings
from memstrata.errors import InvalidInputError
from memstrata.facade.scoping import ScopeArgs
from memstrata.query import validate_kind
from memstrata.types import MemoryKind

if TYPE_CHECKING:
    from memstrata.memory import Memory  # imported when a command opens it: --help and usage errors stay quick

UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="user_id scope")]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="agent_id scope")]
SessionOpt = Annotated[str | None, typer.Option("--session", "-s", help="session_id scope")]
IdArg = Annotated[str, typer.Argument(help="the id, or a unique prefix of it (tables show 12 characters)")]
BUILT_IN_KINDS = tuple(kind.value for kind in MemoryKind)


@dataclass
class CliState:
    db: str | None = None  # a SQLite path or a postgresql:// URL, as given
    config: Path | None = None
    json: bool = False
    vault: Path | None = None  # `memstrata vault --vault PATH`
    tenant: str | None = None  # act inside this tenant (the service's keys each have one)
    _memory: Memory | None = field(default=None, repr=False)
    _opened: Memory | None = field(default=None, repr=False)  # what close() closes: the view's original

    def settings(self) -> Settings:
        """The settings the global options select, without opening the store or loading a model."""
        return load_settings(self.config or None, store_path=self.db)

    def memory(self) -> Memory:
        if self._memory is None:
            from memstrata.memory import Memory

            self._opened = Memory.from_config(self.settings())
            self._memory = self._opened.for_tenant(self.tenant) if self.tenant is not None else self._opened
        return self._memory

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()
        self._memory = self._opened = None


def cli_state(ctx: typer.Context) -> CliState:
    state = ctx.find_root().obj
    if not isinstance(state, CliState):  # a command invoked outside the root app (tests of a sub-app)
        state = ctx.find_root().obj = CliState()
    return state


def scope_args(user: str | None, agent: str | None, session: str | None) -> ScopeArgs:
    return {"user_id": user, "agent_id": agent, "session_id": session}


def check_kinds(memory: Memory, kinds: list[str] | None, scope: ScopeArgs, *, adding: bool = False) -> None:
    """Kinds are extensible (any lowercase identifier), so an unknown one is not an error; but a kind that is
    neither built in nor used in the scope is most likely a typo, and a filter on it finds nothing: say so."""
    if not kinds or not any(scope.values()):
        return
    for kind in kinds:  # an invalid kind is refused before any note about it
        try:
            validate_kind(kind)
        except ValueError as exc:
            raise InvalidInputError(str(exc)) from None
    unknown = [kind for kind in kinds if kind not in BUILT_IN_KINDS]
    if not unknown:
        return
    in_use = memory.stats(**scope).memories_by_kind
    for kind in (kind for kind in unknown if kind not in in_use):
        known = escape(", ".join(sorted(set(BUILT_IN_KINDS) | set(in_use))))
        if adding:
            err_console.print(f"[yellow]note:[/yellow] new kind {escape(repr(kind))} in this scope (kinds are "
                              f"extensible; known here: {known})", highlight=False)  # fmt: skip
        else:
            err_console.print(f"[yellow]warning:[/yellow] no memory in this scope has kind {escape(repr(kind))}, so "
                              f"it matches nothing; known kinds here: {known}", highlight=False)  # fmt: skip


def parse_json_option(value: str | None, name: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f'--{name} must be JSON, e.g. \'{{"source": "notes"}}\' ({exc.msg})') from None


def parse_time_option(value: str | None, name: str) -> datetime | None:
    """An ISO 8601 date or date-time (``2025-03-01``, ``2025-03-01T09:00+08:00``); a date without a zone is UTC."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidInputError(f"--{name} must be an ISO 8601 date or time, e.g. 2025-03-01 or "
                                f"2025-03-01T09:00+08:00; got {value!r}") from None  # fmt: skip
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def configure_logging(verbosity: int) -> None:
    """Warnings by default; -v info, -vv debug. Logs go to stderr so --json output stays clean."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = RichHandler(console=err_console, show_path=verbosity > 1, rich_tracebacks=False, markup=False)
    logging.basicConfig(level=level, format="%(name)s: %(message)s", handlers=[handler], force=True)
