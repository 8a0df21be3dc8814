"""SQLite files are private by default (issue 13): a new database 0600 with its WAL and shared-memory files, the
directories memstrata creates for it 0700; existing directories keep their mode; ``file_mode`` configures it."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.errors import StoreError
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite import connection
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import Message, Scope


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A permissive umask, as on many desktops: the modes below must not depend on it."""
    previous = os.umask(0o002)
    yield
    os.umask(previous)


def write_something(store: SQLiteStore) -> None:
    store.write(WriteBatch(messages=[(Message(role="user", content="hello"), Scope(user_id="u"))]))


@pytest.mark.usefixtures("open_umask")
def test_new_database_and_directories_are_private(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    store = SQLiteStore(tmp_path / "a" / "b" / "memstrata.db")
    write_something(store)
    files = sorted((tmp_path / "a" / "b").iterdir())
    assert [f.name for f in files] == ["memstrata.db", "memstrata.db-shm", "memstrata.db-wal"]
    assert {f.name: mode(f) for f in files} == {f.name: 0o600 for f in files}
    assert (mode(tmp_path / "a"), mode(tmp_path / "a" / "b"), mode(tmp_path)) == (0o700, 0o700, 0o755)
    store.close()


@pytest.mark.usefixtures("open_umask")
def test_file_mode_is_configurable_and_existing_files_keep_theirs(tmp_path: Path) -> None:
    shared = SQLiteStore(tmp_path / "team" / "shared.db", file_mode=0o640)
    write_something(shared)
    assert mode(tmp_path / "team") == 0o750 and mode(tmp_path / "team" / "shared.db") == 0o640
    shared.close()
    (tmp_path / "team" / "shared.db").chmod(0o644)  # an operator's choice survives reopening
    SQLiteStore(tmp_path / "team" / "shared.db").close()
    assert mode(tmp_path / "team" / "shared.db") == 0o644
    umask_default = SQLiteStore(tmp_path / "plain" / "m.db", file_mode=None)
    assert mode(tmp_path / "plain" / "m.db") == 0o644 and mode(tmp_path / "plain") == 0o775  # SQLite, umask
    umask_default.close()


def test_a_store_on_a_read_only_mount_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a read-only mount every command, reads too, said "unable to open database file; point store.path at a
    memstrata SQLite file", which sent the user looking for a wrong path (found by a hardening run). Root writes
    through file modes, so the read-only folder is what os.access reports here."""
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if mode == os.W_OK else real_access(p, mode))

    def unable(*_args: object, **_kwargs: object) -> None:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(connection, "_connect", unable)
    with pytest.raises(StoreError, match="is read-only, and the store writes beside the file"):
        SQLiteStore(path)
