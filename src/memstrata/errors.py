"""The exception tree. Every error says what went wrong and what to do about it.

MemstrataError
├── InvalidInputError          bad text, scope, filter or argument (caller's fault)
├── NotFoundError              no such memory in the given scope
├── ConflictError              an import or key clashes with existing data
│   └── ConcurrentWriteError   another writer changed what this write was planned on (read again, retry)
│       └── TurnStoredMeanwhileError  another writer stored the same turn first (add() looks again: a no-op)
├── ConfirmationRequiredError  a destructive call was made without confirm=True
├── EmbeddingMismatchError     the store holds vectors of another embedding model
├── StoreError                 the database failed (locked too long, corrupt, migration)
├── ProviderError              an embedder or model call failed
└── JobFailedError             a background write job (infer=True) failed; its turns are kept
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


class ConcurrentWriteError(ConflictError):
    """Another writer changed a memory or took a key after this write read them; planning it again from
    the store as it is now resolves it (``add`` does so itself)."""


class TurnStoredMeanwhileError(ConcurrentWriteError):
    """Another writer stored a turn under the same id after this write looked for it (the same turn sent twice at
    once); ``add`` looks again and finds it stored."""


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


class StoreError(MemstrataError):
    pass


class ProviderError(MemstrataError):
    pass


class JobFailedError(MemstrataError):
    """Extraction jobs ended failed. Nothing of theirs was applied; the raw turns are stored and searchable.

    ``jobs`` are the failed jobs, each with ``error`` and the model's ``raw_output``; fix the cause (model
    reachable? output valid?) and queue them again with ``retry_job(job.id)``."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.jobs = list(jobs)
        first = self.jobs[0] if self.jobs else None
        what = f"{len(self.jobs)} write job(s) failed"
        if first is not None:
            what += f"; job {first.id}: {first.error or 'no error recorded'}"
            what += (
                f". The turns are stored and searchable; nothing was applied. See the raw model output with "
                f"`memstrata jobs --status failed` and queue it again with retry_job({first.id!r}) "
                f"(CLI: `memstrata jobs --retry {first.id}`)"
            )
        super().__init__(what)
