"""The embedded default backend: one SQLite file holding memories, raw turns, history and vectors."""

from __future__ import annotations

from pathlib import Path

from memstrata.storage.sql.store import SQLStore
from memstrata.storage.sqlite.dialect import SQLiteDialect


class SQLiteStore(SQLStore):
    """``file_mode``: permissions of a database file this store creates (0600, the owner only; its new
    directories get 0700); None leaves them to SQLite (0644) and the umask."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0, file_mode: int | None = 0o600) -> None:
        self.path = Path(path).expanduser()
        dialect = SQLiteDialect(self.path, busy_timeout_s=busy_timeout_s, file_mode=file_mode)
        super().__init__(dialect, dialect.migrate())
