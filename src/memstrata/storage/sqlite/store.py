"""The embedded default backend: one SQLite file holding memories, raw turns, history and vectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memstrata.storage.sql.store import SQLStore
from memstrata.storage.sqlite import keywords
from memstrata.storage.sqlite.dialect import SQLiteDialect


class SQLiteStore(SQLStore):
    """``file_mode``: permissions of a database file this store creates (0600, the owner only; its new
    directories get 0700); None leaves them to SQLite (0644) and the umask. ``readers``: most connections
    reading at once. ``ann_min_rows``: searches over at least this many vectors use the HNSW graph (0: all).
    ``keyword_cache_min_rows``: stores of at least this many memories rank keywords in memory (0: all)."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0, file_mode: int | None = 0o600,
                 readers: int = 8, ann_min_rows: int = 20_000,
                 keyword_cache_min_rows: int = keywords.MIN_ROWS) -> None:  # fmt: skip
        self.path = Path(path).expanduser()
        dialect = SQLiteDialect(self.path, busy_timeout_s=busy_timeout_s, file_mode=file_mode, readers=readers,
                                ann_min_rows=ann_min_rows, keyword_cache_min_rows=keyword_cache_min_rows)  # fmt: skip
        self._vectors = dialect.vectors
        self._keywords = dialect.keywords
        super().__init__(dialect, dialect.migrate())

    def wait_for_vector_index(self, timeout_s: float | None = None) -> bool:
        """Bring the vector index up to date and wait for a graph build it starts (benchmarks, tests, warm-up)."""
        self._vectors.synced()
        return self._vectors.wait(timeout_s)

    def vector_index_stats(self) -> dict[str, Any]:
        return self._vectors.stats()

    def wait_for_keyword_index(self, timeout_s: float | None = None) -> bool:
        """Start the in-memory keyword index where the store is large enough, and wait for its first build."""
        self._keywords.synced()
        return self._keywords.wait(timeout_s)
