"""The exception tree. Every error says what went wrong and what to do about it.

MemstrataError
├── InvalidInputError          bad text, scope, filter or argument (caller's fault)
├── NotFoundError              no such memory in the given scope
├── ConflictError              an import or key clashes with existing data
├── ConfirmationRequiredError  a destructive call was made without confirm=True
├── EmbeddingMismatchError     the store holds vectors of another embedding model
├── StoreError                 the database failed (locked too long, corrupt, migration)
└── ProviderError              an embedder or model call failed
"""

from __future__ import annotations


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


class StoreError(MemstrataError):
    pass


class ProviderError(MemstrataError):
    pass
