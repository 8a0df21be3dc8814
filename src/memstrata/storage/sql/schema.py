"""Schema migrations, the bookkeeping both backends share: the numbered steps and the ledger that records them.

The tables are written once (``storage/sql/ddl.py``) and rendered by each backend's ``schema_migrations.py``
in its own SQL; the numbers and names are the same on both, so a store copied between backends is at the
same version. Append new steps; never change what a shipped one does (:func:`digest` pins it).

The caller runs :func:`upgrade` in one transaction under its migration lock, so a crash leaves either the
old or the new schema, and processes opening a new database at once migrate it once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping

from memstrata.errors import StoreError
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.types import utcnow

STEPS = {
    1: "initial schema",
    2: "durable job queue",
    3: "graph memory: entities and relations",
    4: "record time: memories.recorded_to",
    5: "process memory: tasks, steps, hypotheses, artifacts, strategies",
    6: "one vector copy: memory_vectors.text_hash; SQLite vector index bookkeeping",
    7: "knowledge sources: one row per ingested document version, with its stable Markdown",
    8: "event-time index: a scope's memories by event time, for time-range searches",
    9: "embedding cache per tenant: plain text hashes of named tenants dropped",
    10: "lookup indexes: a memory's history through the versions it replaced; key slots by memory",
    11: "stored readings: memories.words, what the word tables read in each text when it was written",
}
LATEST_VERSION = max(STEPS)


def numbered(scripts: Mapping[int, str]) -> list[tuple[int, str, str]]:
    """(version, name, SQL) of a backend's scripts, which must cover every step."""
    if sorted(scripts) != sorted(STEPS):
        raise ValueError(f"schema migrations {sorted(scripts)} do not match the steps {sorted(STEPS)}")
    return [(number, STEPS[number], scripts[number]) for number in sorted(scripts)]


def statements(script: str) -> list[str]:
    """What a step does, not how it is written: its statements without comments and layout, sorted."""
    found = []
    for statement in re.sub(r"--[^\n]*", "", script).split(";"):  # no step holds ";" or "--" inside a literal
        compact = re.sub(r"\s*([(),])\s*", r"\1", " ".join(statement.split()))
        if compact:
            found.append(compact)
    return sorted(found)


def digest(script: str) -> str:
    """A step's fingerprint: shipped steps must keep theirs, so a database created by one keeps its meaning."""
    return hashlib.sha256("\n".join(statements(script)).encode()).hexdigest()[:16]


def upgrade(d: Dialect, tx: Tx, ledger: str, migrations: list[tuple[int, str, str]],
            run: Callable[[Tx, str], None]) -> int:  # fmt: skip
    """Apply the steps newer than the ledger (``ledger``: its CREATE TABLE IF NOT EXISTS); the schema version."""
    tx.execute(ledger)
    version = int(tx.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0])
    if version > LATEST_VERSION:
        raise StoreError(
            f"this database has schema version {version}, newer than this memstrata ({LATEST_VERSION}); "
            "upgrade memstrata"
        )
    for number, name, script in migrations:
        if number > version:
            run(tx, script)
            tx.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                       (number, name, d.ts(utcnow())))  # fmt: skip
    return LATEST_VERSION
