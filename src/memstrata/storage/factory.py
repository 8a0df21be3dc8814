"""Open the store that ``store.path`` names: a SQLite file, or a PostgreSQL server by URL."""

from __future__ import annotations

from memstrata.config import StoreSettings, is_postgres_url
from memstrata.errors import StoreError
from memstrata.storage.protocol import Store
from memstrata.storage.sqlite.store import SQLiteStore

__all__ = ["is_postgres_url", "open_store"]


def open_store(settings: StoreSettings) -> Store:
    """``postgresql://user@host/db`` opens PostgreSQL; anything else is a SQLite file path."""
    if not is_postgres_url(settings.path):
        return SQLiteStore(settings.path, busy_timeout_s=settings.busy_timeout_s, file_mode=settings.file_mode_bits(),
                           readers=settings.pool_size, ann_min_rows=settings.ann_min_rows,
                           keyword_cache_min_rows=settings.keyword_cache_min_rows)  # fmt: skip
    try:
        from memstrata.storage.postgres.store import PostgresStore
    except ImportError as exc:
        raise StoreError(
            f"store.path is a PostgreSQL URL but the driver is missing ({exc.name}); "
            "install it with: pip install 'memstrata[postgres]'"
        ) from None
    return PostgresStore(settings.path.strip(), pool_size=settings.pool_size, timeout_s=settings.busy_timeout_s,
                         read_url=settings.read_url.strip() if settings.read_url else None)  # fmt: skip
