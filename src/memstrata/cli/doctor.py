"""``memstrata doctor``: check the set-up by using it, not by reading the configuration back.

Every part is called for real (a query against the store, a Chinese and an English sentence through the
embedder, a one-line request to the model) and timed; a part that fails is shown with its error and what to
do, and the command exits 1. A doctor that reports an unreachable model as fine is worse than none.
"""

from __future__ import annotations

import sqlite3
import stat
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import BaseModel
from rich.text import Text

from memstrata.cli.context import cli_state
from memstrata.cli.render import Table, console, err_console, print_json
from memstrata.providers.llm import ChatMessage, ChatModel
from memstrata.providers.protocol import embedding_identity
from memstrata.records.process import UNIT_KINDS
from memstrata.storage.factory import is_postgres_url

if TYPE_CHECKING:
    from memstrata.memory import Memory


class _Pong(BaseModel):
    ok: bool


@dataclass(frozen=True)
class Check:
    part: str
    ok: bool
    detail: str
    seconds: float


def _timed(part: str, run: Callable[[], str], hint: str) -> Check:
    started = time.perf_counter()
    try:
        detail = run()
        ok = True
    except Exception as exc:  # the doctor reports every failure, whatever its kind
        detail, ok = f"{type(exc).__name__}: {exc} — {hint}", False
    return Check(part, ok, detail, time.perf_counter() - started)


def _store(memory: Memory) -> str:
    location = memory.store.location
    mode = ""
    if not is_postgres_url(location) and Path(location).is_file():
        _check_pages(Path(location))
        mode = f", file mode {stat.S_IMODE(Path(location).stat().st_mode):04o}"
    stats = memory.stats()
    return f"{location} (schema v{stats.schema_version}, {sum(stats.memories_by_status.values())} memories{mode})"


def _check_pages(path: Path) -> None:
    """SQLite's quick_check of every page (read only): one damaged page let doctor say ok while search and add
    failed (found by a hardening run). It reads the whole file: on a large store it takes a while."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            problems = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
    except sqlite3.DatabaseError as exc:  # too damaged to list what is wrong
        problems = [str(exc)]
    if problems != ["ok"]:
        raise RuntimeError(
            f"the store file is damaged: {'; '.join(problems)}. Restore it from a backup, or copy out what can "
            "still be read with 'memstrata export'"
        )


def _embedder(memory: Memory) -> str:
    vectors = memory.embedder.embed_batch(["我对花生过敏。", "I am allergic to peanuts."])
    similarity = float(vectors[0] @ vectors[1])
    identity = embedding_identity(memory.embedder)
    stored = memory.store.embedding_id()
    if stored is not None and stored != identity:
        raise RuntimeError(f"the store holds vectors of {stored}, not {identity}")
    # An add stopped between storing its memories and embedding them (Ctrl-C) leaves them out of dense search,
    # and adding the same texts again finds them stored: only reindex embeds them.
    # A process unit's vector is written later by design (process/indexing.py: when its task finishes, or before a
    # read that compares vectors): a store with a task running failed here, and so did every import of it.
    deferred = 0
    for batch in memory.store.memories_needing_vectors(identity, 500):
        unembedded = [item for item in batch if item.kind not in UNIT_KINDS]
        if unembedded:
            raise RuntimeError(
                f"some memories have no vector (the first: {unembedded[0].id}), as when an add is stopped"
            )
        deferred += len(batch)
    waiting = f"; {deferred} process units wait for their vectors (embedded when their task ends)" if deferred else ""
    held = stored or "(none yet)"
    return f"{identity}; zh/en similarity of one sentence {similarity:.2f}; store vectors {held}{waiting}"


def _model(model: ChatModel) -> str:
    result = model.complete_structured(
        [ChatMessage("user", 'Reply with exactly this JSON: {"ok": true}')], _Pong, max_tokens=16
    )
    path = getattr(model, "model_path", None)
    where = ""
    if isinstance(path, Path):
        size = f"{path.stat().st_size / 1e9:.2f} GB" if path.is_file() else "not assembled yet"
        where = f"; file {path} ({size})"
    return f"{model.model_id} answered in {result.latency_s:.1f} s ({result.attempts} attempt(s)){where}"


def run_checks(memory: Memory, *, call_model: bool) -> list[Check]:
    checks = [
        _timed("store", lambda: _store(memory), "check store.path (--db) and that the file or server is reachable"),
        _timed("embedder", lambda: _embedder(memory), "see embedder.* in the configuration; `memstrata reindex`"),
    ]
    model = getattr(memory.extractor, "model", None)
    if model is None:
        checks.append(Check("model", True, f"none: {memory.llm_reason}", 0.0))
    elif not call_model:
        checks.append(Check("model", True, f"{model.model_id} (not called: --no-model-call)", 0.0))
    else:
        hint = "check llm.base_url / llm.model / the API key, or set llm.provider = rules"
        checks.append(_timed("model", lambda: _model(model), hint))
    return checks


def doctor(
    ctx: typer.Context,
    model_call: Annotated[
        bool, typer.Option("--model-call/--no-model-call", help="send the model one short request (default)")
    ] = True,
) -> None:
    """Check the store, the embedder and the model by calling each; exit 1 if any fails."""
    state = cli_state(ctx)
    memory = state.memory()
    checks = run_checks(memory, call_model=model_call)
    settings = memory.settings
    context = {
        "extractor": memory.extractor.name,
        "reconciler": memory.reconciler.name,
        "why this model": memory.llm_reason,
        "trigger": settings.write.trigger,
    }
    if state.json:
        print_json({"ok": all(c.ok for c in checks), "checks": [vars(c) for c in checks], **context})
    else:
        table = Table(title="memstrata doctor")
        for column in ("part", "", "detail", "seconds"):
            table.add_column(column, overflow="fold")
        for check in checks:
            mark = Text("ok", style="green") if check.ok else Text("FAILED", style="red")
            table.add_row(check.part, mark, check.detail, f"{check.seconds:.2f}")
        for name, value in context.items():
            table.add_row(name, "", str(value), "")
        console.print(table)
    if not all(check.ok for check in checks):
        err_console.print("[red]doctor: some parts failed[/red] (see above)")
        raise typer.Exit(1)
