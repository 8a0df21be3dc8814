"""Output for people (rich tables) and for scripts (--json). No logic beyond presentation."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text

from memstrata.types import HistoryEvent, Job, MemoryItem, SearchHit

# Off a terminal rich assumes 80 columns, which folds Chinese text badly in logs; use 120 there. No emoji codes:
# a key such as acct:bank:pin printed as "acct🏦pin".
console = Console(width=None if sys.stdout.isatty() else 120, emoji=False)
err_console = Console(stderr=True, emoji=False)


class Table(RichTable):
    """A rich table whose text cells and title are shown as they are. Rich reads a plain string as markup, so a
    stored text holding ``[/i]`` (code) stopped every command listing it with a MarkupError, and ``[bold]`` was
    swallowed; a cell meant to be styled is passed as a ``Text``."""

    def __init__(self, *headers: Any, title: str | Text | None = None, **options: Any) -> None:
        super().__init__(*headers, title=Text(title) if isinstance(title, str) else title, **options)

    def add_row(self, *cells: Any, **options: Any) -> None:
        super().add_row(*(Text(cell) if isinstance(cell, str) else cell for cell in cells), **options)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """'1 file', '2 files', '1 memory', '3 memories'."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    return value


def print_json(value: Any) -> None:
    # Plain print: rich would wrap long lines and break the JSON for scripts.
    print(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2, default=str))


__all__ = ["Table", "console", "counted", "err_console", "escape"]


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def memories_table(items: Sequence[MemoryItem], title: str = "memories") -> Table:
    table = Table(title=title, show_lines=False)
    for column in ("id", "kind", "status", "text", "key", "updated"):
        table.add_column(column, overflow="fold")
    for item in items:
        table.add_row(
            item.id[:12],
            item.kind,
            item.status.value,
            _short(item.text),
            item.key or "",
            item.updated_at.strftime("%Y-%m-%d %H:%M"),
        )
    return table


def hits_table(hits: Sequence[SearchHit], query: str) -> Table:
    table = Table(title=f"search: {query}")
    for column in ("#", "score", "text", "kind", "keyword", "vector", "id"):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(hits, start=1):
        b = hit.breakdown
        keyword = "key" if b.key_match else (f"#{b.keyword_rank}" if b.keyword_rank else "-")
        vector = f"#{b.vector_rank} ({b.vector_similarity:.2f})" if b.vector_rank and b.vector_similarity else "-"
        table.add_row(str(rank), f"{hit.score:.3f}", _short(hit.text), hit.memory.kind, keyword, vector, hit.id[:12])
    return table


def history_table(events: Sequence[HistoryEvent], of: str | None = None) -> Table:
    """``of``: what was asked about (the id given, a note path); the first event may be an older version's."""
    table = Table(title=f"history of {of or (events[0].memory_id if events else '')}".strip())
    for column in ("time", "action", "old", "new", "actor", "reason"):
        table.add_column(column, overflow="fold")
    for event in events:
        table.add_row(
            event.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            event.action.value,
            _short(event.old_text or "", 40),
            _short(event.new_text or "", 40),
            event.actor,
            event.reason or "",
        )
    return table


def memory_detail(item: MemoryItem) -> Table:
    table = Table(show_header=False, title=f"memory {item.id}")
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for field, value in item.model_dump(mode="json").items():
        table.add_row(field, json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value))
    return table


def jobs_table(jobs: Sequence[Job]) -> Table:
    table = Table(title="jobs")
    for column in ("id", "status", "turns", "attempts", "decisions", "model calls", "seconds", "error"):
        table.add_column(column, overflow="fold")
    for job in jobs:
        decisions = job.result.get("decisions", [])
        actions = ", ".join(f"{d['action']}" for d in decisions) if decisions else "-"
        table.add_row(
            job.id[:12],
            job.status.value,
            str(len(job.message_ids)),
            str(job.attempts),
            actions,
            str(job.result.get("model_calls", "-")),
            str(job.result.get("seconds", "-")),
            _short(job.error or "", 60),
        )
    return table


def key_values(values: dict[str, Any], *, title: str) -> Table:
    """A two-column table for reports (stats, doctor, maintenance), nested values as compact JSON."""
    table = Table(show_header=False, title=title)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for field, value in values.items():
        table.add_row(field.replace("_", " "), _plain(value))
    return table


def _plain(value: Any) -> str:
    """Nested values as people read them: ``active 3 · deleted 1``, not a Python or JSON dump."""
    if isinstance(value, dict):
        return " · ".join(f"{key} {_plain(item)}" for key, item in value.items()) or "-"
    if isinstance(value, list | tuple):
        return ", ".join(_plain(item) for item in value) or "-"
    return "-" if value is None else str(value)


def decision_line(decision: Mapping[str, Any]) -> str:
    """One decision of an extraction job, as ``add --infer`` prints it. An UPDATE says what it closed: a brother's
    name closing the sister's could not be seen in the output (a user trial)."""
    text = decision.get("text") or decision.get("old")
    closed = f"{decision['old']} -> " if decision.get("text") and decision.get("old") else ""
    return f"  [cyan]{decision['action']}[/cyan] {escape(closed + str(text))}"
