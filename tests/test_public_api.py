import memstrata

EXPECTED = [
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


def test_public_names_are_pinned_and_sorted() -> None:
    assert memstrata.__all__ == EXPECTED
    assert sorted(memstrata.__all__) == memstrata.__all__
    for name in memstrata.__all__:
        assert getattr(memstrata, name) is not None
