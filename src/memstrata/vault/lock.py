"""One writer per vault at a time: a lock per vault folder, shared by every Vault object in the
process (a Vault is cheap and made per request), and an advisory ``flock`` on the folder itself so
a ``memstrata vault sync`` in another process waits for the service instead of racing it. Locking
the folder needs no lock file, so nothing but notes is ever written into the vault."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: the in-process lock still serialises the service's own writers
    fcntl = None  # type: ignore[assignment]


class _FolderLock:
    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.depth = 0  # flock once per outermost hold: a second flock on a new descriptor would wait on itself
        self.fd: int | None = None


_LOCKS: dict[Path, _FolderLock] = {}
_REGISTRY = threading.Lock()


@contextmanager
def vault_lock(root: Path) -> Iterator[None]:
    with _REGISTRY:
        lock = _LOCKS.setdefault(root, _FolderLock())
    with lock.thread_lock:
        if lock.depth == 0 and fcntl is not None and root.is_dir():
            lock.fd = os.open(root, os.O_RDONLY)
            fcntl.flock(lock.fd, fcntl.LOCK_EX)
        lock.depth += 1
        try:
            yield
        finally:
            lock.depth -= 1
            if lock.depth == 0 and lock.fd is not None:
                if fcntl is not None:
                    fcntl.flock(lock.fd, fcntl.LOCK_UN)
                os.close(lock.fd)
                lock.fd = None
