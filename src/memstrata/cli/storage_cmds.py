"""Copying a whole store between backends (SQLite <-> PostgreSQL). Schema migrations are not this: they
run by themselves when a store is opened."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from memstrata.cli.context import CliState, cli_state
from memstrata.cli.progress import progress_counters
from memstrata.cli.render import Table, console, print_json
from memstrata.errors import StoreError
from memstrata.storage.copy import CopyReport, TableReport, copy_store, verify_copy

FromOpt = Annotated[str, typer.Option("--from", help="source store: a SQLite file or a postgresql:// URL")]
ToOpt = Annotated[str, typer.Option("--to", help="target store: a postgresql:// URL or a SQLite file")]

app = typer.Typer()


@app.command("copy")
def copy(
    ctx: typer.Context,
    source: FromOpt,
    target: ToOpt,
    chunk_size: Annotated[int, typer.Option(min=1, max=100_000, help="rows per target transaction")] = 1000,
    check_only: Annotated[bool, typer.Option("--verify-only", help="compare the two stores, copy nothing")] = False,
) -> None:
    """Copy every row between backends (SQLite <-> PostgreSQL), then verify counts and checksums.

    Interrupted? Run the same command again: rows already in the target are skipped. Do not write
    to the source while it is copied.
    """
    state = cli_state(ctx)
    if check_only:
        report = verify_copy(source, target, chunk_size=chunk_size)
    else:
        with progress_counters(quiet=state.json) as update:
            report = copy_store(source, target, chunk_size=chunk_size,
                                progress=lambda table, copied, skipped: update(table, copied + skipped))  # fmt: skip
    _show(state, report)
    if not report.verified:
        bad = ", ".join(table.table for table in report.tables if not table.matches)
        if any(table.missing for table in report.tables):  # a key the target held with other values: not copied
            raise StoreError(f"some source rows are not in the target as they are ({bad}): the target holds "
                             "their keys with other values; copy into an empty store to keep both")  # fmt: skip
        raise StoreError(f"the stores differ in: {bad}; run `memstrata copy` again to finish the copy")


# The old name, kept so scripts written for it still run; `copy` says what it does.
app.command("migrate", hidden=True, help="Old name of `copy`.")(copy)


def _show(state: CliState, report: CopyReport) -> None:
    if state.json:
        print_json(
            {
                "source": report.source,
                "target": report.target,
                "verified": report.verified,
                "tables": [vars(table) | {"matches": table.matches} for table in report.tables],
            }
        )
        return
    table = Table(title=f"{report.source} -> {report.target}")
    for column in ("table", "source rows", "target rows", "copied", "skipped", "checksum"):
        table.add_column(column, justify="left" if column in ("table", "checksum") else "right")
    for row in report.tables:
        table.add_row(row.table, str(row.source_rows), str(row.target_rows), str(row.copied), str(row.skipped),
                      _verdict(row))  # fmt: skip
    console.print(table)
    console.print("verified: every source row is in the target" if report.verified else "[red]not verified[/red]")


def _verdict(row: TableReport) -> Text:
    if row.missing:
        return Text(f"{row.missing} rows missing or different", style="red")
    if row.missing == 0:  # the target held rows before: it contains the source, and may hold more
        return Text("match" if row.target_rows == row.source_rows else "contained", style="green")
    return Text("match", style="green") if row.matches else Text("DIFFERS", style="red")
