"""memstrata: layered long-term memory for LLM agents."""

from memstrata.config import Settings, load_settings
from memstrata.errors import (
    ConcurrentWriteError,
    ConfirmationRequiredError,
    ConflictError,
    EmbeddingMismatchError,
    InvalidInputError,
    JobFailedError,
    MemstrataError,
    NotFoundError,
    ProviderError,
    StoreError,
)
from memstrata.export import ImportReport
from memstrata.memory import Memory
from memstrata.providers.protocol import Embedder
from memstrata.query import Filters, TimeRange
from memstrata.types import (
    AddResult,
    HistoryAction,
    HistoryEvent,
    ItemError,
    MemoryEvent,
    MemoryItem,
    MemoryKind,
    MemoryStatus,
    Message,
    Provenance,
    Scope,
    ScoreBreakdown,
    SearchHit,
    StoredMessage,
)

__version__ = "0.1.0"

__all__ = [
    "AddResult",
    "ConcurrentWriteError",
    "ConfirmationRequiredError",
    "ConflictError",
    "Embedder",
    "EmbeddingMismatchError",
    "Filters",
    "HistoryAction",
    "HistoryEvent",
    "ImportReport",
    "InvalidInputError",
    "ItemError",
    "JobFailedError",
    "Memory",
    "MemoryEvent",
    "MemoryItem",
    "MemoryKind",
    "MemoryStatus",
    "MemstrataError",
    "Message",
    "NotFoundError",
    "Provenance",
    "ProviderError",
    "Scope",
    "ScoreBreakdown",
    "SearchHit",
    "Settings",
    "StoreError",
    "StoredMessage",
    "TimeRange",
    "load_settings",
]
