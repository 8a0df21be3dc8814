"""The exception tree. Every error says what went wrong and what to do about it.

MemstrataError
├── InvalidInputError          bad text, scope, filter or argument (caller's fault)
├── NotFoundError              no such memory in the given scope
├── ConflictError              an import or key clashes with existing data
├── ConfirmationRequiredError  a destructive call was made without confirm=True
├── EmbeddingMismatchError     the store holds vectors of another embedding model
├── StoreError                 the database failed (locked too long, corrupt, migration)
├── ProviderError              an embedder or model call failed
└── JobFailedError             a write-path job failed (its error and raw model output are on the job)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memstrata.types import Job


class MemstrataError(Exception):
    """Base of every error memstrata raises on purpose."""


class InvalidInputError(MemstrataError, ValueError):
    pass


class NotFoundError(MemstrataError, LookupError):
    pass


class ConflictError(MemstrataError):
    pass


class ConfirmationRequiredError(MemstrataError):
    pass


class EmbeddingMismatchError(MemstrataError):
    def __init__(self, stored: str, configured: str) -> None:
        super().__init__(
            f"this store holds vectors from embedding model {stored!r} but {configured!r} is configured; "
            f"configure {stored!r} again, or run `memstrata reindex` to re-embed every memory with {configured!r}"
        )
        self.stored = stored
        self.configured = configured


class JobFailedError(MemstrataError):
    """Raised by ``flush()`` / ``add(wait=True)`` when extraction jobs they waited for failed. The turns are stored;
    ``jobs`` holds the failed jobs (``error``, ``raw_output``) so they can be inspected and retried."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        first = jobs[0]
        more = f" (and {len(jobs) - 1} more)" if len(jobs) > 1 else ""
        super().__init__(
            f"extraction job {first.id} failed{more}: {first.error or 'no error recorded'}; the raw turns are "
            f"stored. Inspect it with `memstrata jobs --status failed`, then `memstrata retry {first.id}`"
        )
        self.jobs = list(jobs)


class StoreError(MemstrataError):
    pass


class ProviderError(MemstrataError):
    pass
