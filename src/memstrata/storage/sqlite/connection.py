"""Opening a SQLite file the way several processes can share it (WAL, busy timeout, retries), private to
its owner, and so that deleted text does not linger in free space."""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from memstrata.errors import StoreError

T = TypeVar("T")
PAGE_SIZE = 16_384
WAL_SIZE_LIMIT = 16 * 1024 * 1024  # what the WAL shrinks back to: about one autocheckpoint (1,000 pages)
# A WAL a write left larger than this is checkpointed and emptied right after its commit (shrink_wal)
WAL_SHRINK_AT = WAL_SIZE_LIMIT


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


_DAMAGE = ("malformed", "file is not a database", "disk i/o error", "vtable constructor failed")


def damage_error(exc: sqlite3.DatabaseError) -> StoreError | None:
    """A clear error for a damaged database file, or None for any other error. One damaged page let the store open
    and list, then search and add ended in a raw traceback (CLI) or a bare 500 (REST; found by a hardening run)."""
    if isinstance(exc, sqlite3.IntegrityError) or not any(sign in str(exc).lower() for sign in _DAMAGE):
        return None
    return StoreError(
        f"the store file is damaged ({exc}); 'memstrata doctor' checks it: restore the file from a backup, or copy "
        "out what can still be read with 'memstrata export'"
    )


def create_private(path: Path, file_mode: int | None) -> None:
    """A new database file gets ``file_mode`` (0600: the owner only) and the directories memstrata creates for it
    the same rights plus search (0700); SQLite gives the -wal and -shm files the database file's mode. Existing
    files and directories keep theirs; None leaves it all to SQLite (0644) and the umask."""
    if file_mode is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    dir_mode = file_mode | ((file_mode & 0o444) >> 2)
    for directory in reversed([p for p in (path.parent, *path.parent.parents) if not p.exists()]):
        directory.mkdir(mode=dir_mode, exist_ok=True)
        directory.chmod(dir_mode)  # mkdir's mode is masked by the umask
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, file_mode))
        path.chmod(file_mode)


def connect(
    path: Path, *, busy_timeout_s: float, file_mode: int | None = 0o600, cache_mib: int = 64
) -> sqlite3.Connection:
    """``cache_mib``: this connection's page cache. Each connection has its own, so a pool of readers gets a
    smaller one each than the writer (8 readers at 64 MiB could hold half a gigabyte of copies of one file)."""
    if path.is_dir():
        raise StoreError(f"{path} is a directory; the store is one SQLite file (store.path, --db): {path}/memory.db")
    try:
        return _connect(path, busy_timeout_s=busy_timeout_s, file_mode=file_mode, cache_mib=cache_mib)
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and is_locked(exc):
            raise
        if _read_only(path):  # "unable to open database file" sent the user looking for a wrong path
            raise StoreError(
                f"cannot open {path}: the file or its folder is read-only, and the store writes beside the file (its "
                "WAL and index files); make the folder writable, or copy the file to a writable place"
            ) from None
        raise StoreError(f"cannot open {path} as a memstrata store: {exc}; point store.path (--db) at a memstrata "
                         "SQLite file or at a new file name") from None  # fmt: skip
    except OSError as exc:
        raise StoreError(f"cannot create the store file {path}: {exc.strerror or exc}") from None


def _read_only(path: Path) -> bool:
    """The store file, or the folder it needs to write beside it, cannot be written (a read-only mount, modes)."""
    return (path.exists() and not os.access(path, os.W_OK)) or not os.access(path.parent, os.W_OK)


def _connect(path: Path, *, busy_timeout_s: float, file_mode: int | None, cache_mib: int) -> sqlite3.Connection:
    create_private(path, file_mode)
    conn = sqlite3.connect(
        path,
        timeout=busy_timeout_s,
        isolation_level=None,  # explicit BEGIN/COMMIT only
        check_same_thread=False,  # guarded by the store's lock; background workers share it
    )
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    # A float32 vector of 512 dims is a 2 KB row: with SQLite's 4 KiB pages only one fits per page and half of
    # the file is slack (measured: 4.1 KB per vector). 16 KiB pages hold seven (float16 vectors: fifteen). Only a
    # new, empty file takes it.
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone(), timeout_s=busy_timeout_s)
    conn.execute("PRAGMA synchronous = NORMAL")  # durable across application crashes; WAL makes it safe
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA secure_delete = ON")  # deleted rows are overwritten with zeros, not left in free space
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute(f"PRAGMA cache_size = {-1024 * cache_mib}")
    # The WAL file keeps the size of the largest transaction it ever held (a 10,000-memory batch: 36 MB, 320 MB
    # by a million memories) unless a limit truncates it when it is next reset after a checkpoint.
    conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
    return conn


def shrink_wal(conn: sqlite3.Connection, path: Path, *, busy_timeout_s: float) -> None:
    """Checkpoint a WAL grown past ``WAL_SHRINK_AT`` and truncate it to nothing, without waiting.

    ``journal_size_limit`` truncates the WAL only when a later write starts it over, which needs every earlier
    frame checkpointed and no reader on them: after an import the WAL kept the size of its largest batch
    (25 MB after 10,000 memories, 2.5 KB a memory) or more (320 MB after a million) until the next write.
    Called after a commit: where a reader still holds an older snapshot, the checkpoint gives up at once
    instead of making the writer wait, and the next commit tries again.
    """
    try:
        if os.path.getsize(f"{path}-wal") <= WAL_SHRINK_AT:
            return
    except OSError:
        return
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # (1, ...) when a reader made it give up
    except sqlite3.Error:
        pass  # the commit stands; a WAL left as it is costs disk, not data
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
