"""Keeping the index current while the service runs: a thread that watches the vault folder
(watchfiles: inotify / FSEvents / ReadDirectoryChangesW, or polling) and syncs the notes that
changed, a debounced batch at a time. It first syncs the whole vault, catching up on edits made
while the service was down. A failing sync is logged and kept in ``last_error``; the watcher goes on.

The service starts it in its lifespan (``with VaultWatcher(vault): serve()``); tests do the same.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import watchfiles

from memstrata.errors import MemstrataError
from memstrata.vault.models import SyncReport
from memstrata.vault.vault import Vault

logger = logging.getLogger("memstrata.vault")


class VaultWatcher:
    def __init__(self, vault: Vault, *, initial_sync: bool = True) -> None:
        self.vault = vault
        self.initial_sync = initial_sync
        self.last_error: str | None = None
        self.last_report: SyncReport | None = None
        self.syncs = 0
        self.ready = threading.Event()  # set once the initial sync is done and the folder is watched
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> VaultWatcher:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="memstrata-vault-watch", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> VaultWatcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _sync(self, paths: list[str] | None) -> None:
        try:
            report = self.vault.sync(actor="vault-watch") if paths is None else self.vault.sync_paths(paths)
        except MemstrataError as exc:  # e.g. a sync that would delete most notes asks a person first
            self.last_error = str(exc)
            logger.error("vault sync failed: %s", exc)
            return
        self.syncs += 1
        self.last_report = report
        for warning in report.warnings:
            logger.warning("vault: %s", warning)

    def _run(self) -> None:
        layout = self.vault.layout
        if self.initial_sync:
            self._sync(None)
        settings = self.vault.settings

        def is_note(_: watchfiles.Change, path: str) -> bool:
            return layout.is_note(Path(path))

        changes = watchfiles.watch(
            layout.root,
            watch_filter=is_note,
            debounce=settings.watch_debounce_ms,
            step=50,
            stop_event=self._stop,
            rust_timeout=500,
            yield_on_timeout=True,  # wakes up twice a second, so `ready` is set even before the first change
            raise_interrupt=False,
            force_polling=settings.force_polling or None,
        )
        for batch in changes:
            self.ready.set()
            paths = sorted({Path(path).relative_to(layout.root).as_posix() for _, path in batch})
            if paths:
                self._sync(paths)
