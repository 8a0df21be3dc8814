"""Opening a SQLite file the way several processes can share it: WAL, busy timeout, retries."""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memstrata.errors import StoreError

T = TypeVar("T")


def is_locked(exc: sqlite3.OperationalError) -> bool:
    message = str(exc).lower()
    return "locked" in message or "busy" in message


def retry_locked(action: Callable[[], T], *, timeout_s: float) -> T:
    """Run ``action``, retrying with jittered back-off while another process holds the lock.

    SQLite's own busy timeout covers most waits; this catches the cases it does not (WAL
    recovery, switching journal mode) so "database is locked" never reaches the caller early.
    """
    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise
            if time.monotonic() >= deadline:
                raise StoreError(
                    f"the database stayed locked for {timeout_s:.0f} s; another process holds a long "
                    "write transaction. Retry, or raise store.busy_timeout_s"
                ) from exc
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.25)


def connect(path: Path, *, busy_timeout_s: float) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path,
        timeout=busy_timeout_s,
        isolation_level=None,  # explicit BEGIN/COMMIT only
        check_same_thread=False,  # guarded by the store's lock; background workers share it
    )
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone(), timeout_s=busy_timeout_s)
    conn.execute("PRAGMA synchronous = NORMAL")  # durable across application crashes; WAL makes it safe
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache
    return conn
