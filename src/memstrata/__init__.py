"""memstrata: layered long-term memory for LLM agents.

The public names below are imported on first use (PEP 562), not with the package: every ``memstrata.*``
import runs this file first, and the whole facade costs ~0.7 s of start-up that ``memstrata --help``, the
document converter's child process and a script importing one submodule do not need.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    "memstrata.config": ["Settings", "load_settings"],
    "memstrata.errors": ["ConcurrentWriteError", "ConfirmationRequiredError", "ConflictError",
                         "EmbeddingMismatchError", "InvalidInputError", "JobFailedError", "MemstrataError",
                         "NotFoundError", "ProviderError", "StoreError"],
    "memstrata.export": ["ImportReport"],
    "memstrata.memory": ["Memory"],
    "memstrata.providers.protocol": ["Embedder"],
    "memstrata.query": ["Filters", "TimeRange"],
    "memstrata.types": ["AddResult", "HistoryAction", "HistoryEvent", "ItemError", "MemoryEvent", "MemoryItem",
                        "MemoryKind", "MemoryStatus", "Message", "Provenance", "Scope", "ScoreBreakdown",
                        "SearchHit", "StoredMessage"],
}  # fmt: skip
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}

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


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        if not name.startswith("_") and find_spec(f"memstrata.{name}") is not None:
            return import_module(f"memstrata.{name}")  # ``memstrata.config`` after ``import memstrata``, as before
        raise AttributeError(f"module 'memstrata' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
