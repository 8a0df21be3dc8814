"""What differs between the SQL backends, and nothing else.

The store (``sql/store.py``) and its helpers write every statement once, with ``?`` placeholders,
standard ``ON CONFLICT`` upserts and ``NULLS FIRST/LAST``, which SQLite (3.35+) and PostgreSQL both
understand. A backend supplies a :class:`Dialect`: how it holds connections and transactions,
how values travel (timestamps, JSON, vectors), the few SQL pieces that are spelled differently
(IN lists, JSON paths), and its two search engines (keyword and dense) with the bookkeeping they
need (SQLite's FTS5 table and in-process vector index; PostgreSQL's tsvector column and pgvector).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from memstrata.errors import ConflictError, TurnStoredMeanwhileError
from memstrata.query import Filters
from memstrata.storage.protocol import ScoredId, Vector
from memstrata.types import MemoryItem, Scope

if TYPE_CHECKING:
    pass

T = TypeVar("T")
_RECORDS = {"memories": "a memory", "messages": "a message", "history": "a history event", "jobs": "a job"}


def duplicate_error(table: str | None, detail: str) -> ConflictError:
    """The error for a row whose unique key is taken, the same on every backend."""
    what = f"{_RECORDS[table]} with this id already exists" if table in _RECORDS else "the write clashes with data"
    error = TurnStoredMeanwhileError if table == "messages" else ConflictError
    return error(f"{what} ({detail.strip()}); nothing was written")


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def fetchmany(self, size: int, /) -> list[Any]: ...


class Tx(Protocol):
    """A connection the store may use right now: inside its transaction, or for reads."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Cursor:
        """Runs ``sql`` once per row; the cursor's rowcount is the sum over all rows."""
        ...


class Dialect(Protocol):
    location: str  # shown in stats and errors (never with a password)
    vector_column: str  # memory_vectors' vector column
    by_key: str  # prefix of scope conditions in a query that also names rows by key (a planner hint)
    for_update: str  # row locks for a read-then-write inside a transaction
    skip_locked: str  # ... that passes over rows another writer holds
    # Columns a backend keeps beside a memory's fields: (column, SQL expression) for INSERT and UPDATE.
    memory_extras: tuple[tuple[str, str], ...]
    touch: str  # SET fragment marking a memory row as changed, for an index that follows changes
    terms_version: str  # the keyword terms this backend stores (lexical.SEARCH_TERMS_VERSION and its own steps)

    # --- connections ---------------------------------------------------------------------------
    def read(self, action: Callable[[Tx], T]) -> T: ...

    def transaction(self, action: Callable[[Tx], T]) -> T:
        """``action`` all-or-nothing; driver errors come out as memstrata errors."""
        ...

    def close(self) -> None: ...

    # --- values ------------------------------------------------------------------------------
    def ts(self, moment: datetime | None) -> Any: ...

    def time(self, value: Any) -> datetime | None: ...

    def json(self, value: Any) -> Any: ...

    def model_json(self, value: Any) -> Any:
        """JSON from model output, stored verbatim where the database can hold it."""
        ...

    def model_text(self, value: str | None) -> str | None: ...

    def from_json(self, value: Any) -> Any: ...

    def vector(self, vector: Vector) -> Any: ...

    def from_vector(self, value: Any) -> Vector: ...

    def memory_extra_params(self, item: MemoryItem) -> tuple[Any, ...]: ...

    # --- SQL pieces --------------------------------------------------------------------------
    def in_(self, column: str, values: Sequence[Any], *, negate: bool = False) -> tuple[str, list[Any]]: ...

    def json_text(self, column: str, key: str) -> str:
        """The text at a top-level key of a JSON column."""
        ...

    def metadata_is(self, column: str, name: str, value: Any) -> tuple[str, list[Any]]:
        """A metadata field equals ``value``; None matches a missing key or a JSON null."""
        ...

    # --- bookkeeping around writes --------------------------------------------------------------
    def begin_batch(self, tx: Tx) -> None:
        """At the start of every write batch (SQLite: bump the change counter its vector index follows)."""
        ...

    def index_memories(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        """After memories were inserted or replaced: their keyword entries, where kept apart."""
        ...

    def reindex_keywords(self, tx: Tx, items: Sequence[MemoryItem]) -> None:
        """Derive the keyword terms of stored memories again (the tokenizer changed)."""
        ...

    def drop_memories(self, tx: Tx, seqs: Sequence[int] | None) -> dict[str, int]:
        """Before memories (all, for None) are deleted: what hangs off them outside the row; rows per table."""
        ...

    def lock_claims(self, tx: Tx) -> None:
        """One job claimer at a time, so a scope's queued jobs go to one worker."""
        ...

    def snapshot(self, tx: Tx) -> None:
        """First in a transaction: every later statement of it reads the same committed state, so rows that other
        writers commit meanwhile are neither half-deleted nor half-counted (an erase)."""
        ...

    def on_embedding_id(self, tx: Tx, embedding_id: str) -> None:
        """The store's embedding model was set (PostgreSQL: the HNSW index for its dimension)."""
        ...

    def scrub(self) -> None:
        """After a hard delete: leave no copy of deleted text in indexes or logs the backend controls."""
        ...

    # --- search and whole-store -----------------------------------------------------------------
    def keyword_search(self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int) -> list[ScoredId]:
        """Memories of ``scope`` passing ``filters`` that hold any of the tokens, best first (higher is better)."""
        ...

    def vector_search(self, scope: Scope, vector: Vector, filters: Filters, limit: int) -> list[ScoredId]: ...

    def size_bytes(self, tx: Tx) -> int | None: ...

    def find_traces(self, needles: Sequence[str]) -> dict[str, list[str]]: ...

    def compact(self) -> None: ...

    def before_copy(self, tx: Tx) -> None:
        """Before ``storage/copy.py`` fills this store (PostgreSQL: postpone the HNSW build into an empty table)."""
        ...

    def after_copy(self, tx: Tx) -> None: ...
