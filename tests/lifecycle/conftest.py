from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def clocked_memory(store: Store, embedder: UniversalSentenceEncoder, clock: ManualClock) -> Callable[..., Memory]:
    """A Memory on the test store with a manual clock; keyword arguments become settings overrides."""

    def make(**overrides: object) -> Memory:
        settings = load_settings({"store": {"path": store.location}, "write": {"background": False}, **overrides})
        return Memory(store, embedder, settings=settings, clock=clock)

    return make
