"""Permissions of the files a store creates: the owner only (0600, directories 0700) unless configured.

TODO(merge with the storage branch): ``SQLiteStore(file_mode=...)`` does this itself there; once it is
merged, ``Memory.from_config`` passes ``store.file_mode_bits()`` to the store and this module goes.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memstrata.config import StoreSettings
from memstrata.storage.factory import is_postgres_url


def prepare_private_file(settings: StoreSettings) -> None:
    """Create a new SQLite file (and the directories above it) with the configured mode before SQLite opens
    it; SQLite gives its -wal and -shm files the database file's mode. An existing file is left as it is:
    its owner chose its mode."""
    mode = settings.file_mode_bits()
    if mode is None or is_postgres_url(settings.path) or settings.path.strip() in ("", ":memory:"):
        return
    path = Path(settings.path).expanduser()
    if path.exists():
        return
    dir_mode = mode | ((mode & 0o444) >> 2)  # r for someone means x on the directory for them too
    missing = [parent for parent in reversed(path.parents) if not parent.exists()]
    for directory in missing:
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=dir_mode)
        directory.chmod(dir_mode)  # mkdir's mode is filtered by the umask
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, mode))
    path.chmod(mode)
