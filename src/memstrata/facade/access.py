"""Access records (reinforcement from use), batched off the read path.

A memory counts as *used* when a caller says so (``memory.mark_used``) or when ``context()`` puts it
in front of an agent; merely being returned by search is not use (DESIGN.md §6). Explicit marks are
written at once; marks made on a read path are buffered here and written by a background thread, so
reads never take the write lock. Counters are advisory: marks still buffered when a process is
killed are lost, which only delays reinforcement.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime

from memstrata.storage.protocol import Store
from memstrata.types import Scope

log = logging.getLogger(__name__)


class AccessLog:
    def __init__(self, store: Store, clock: Callable[[], datetime], *, interval_s: float = 2.0) -> None:
        self._store = store
        self._clock = clock
        self._interval_s = interval_s
        self._pending: dict[Scope, set[str]] = defaultdict(set)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def record_now(self, scope: Scope, memory_ids: Sequence[str]) -> int:
        """Count a use of each memory of ``scope`` named; returns how many were counted (others are ignored)."""
        return self._store.record_access(scope, list(dict.fromkeys(memory_ids)), self._clock()) if memory_ids else 0

    def record_later(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        with self._lock:
            self._pending[scope].update(memory_ids)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="memstrata-access-log", daemon=True)
                self._thread.start()

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, defaultdict(set)
        for scope, ids in pending.items():
            try:
                self.record_now(scope, sorted(ids))
            except Exception:  # a counter must never break the caller; the next use counts again
                log.warning("could not record %d memory accesses for %s", len(ids), scope.label(), exc_info=True)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.flush()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self._interval_s)
            if not self._stop.is_set():
                self.flush()
