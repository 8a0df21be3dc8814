"""Stores for the scale tests. ``store_factory`` is overridden here so the contract suites imported by
``test_contract_ann.py`` run on SQLite with the HNSW graph forced on for every search (``ann_min_rows=0``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memstrata.storage.protocol import Store
from memstrata.storage.sqlite.store import SQLiteStore


@pytest.fixture(params=["sqlite-ann"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Store]]:
    opened: list[Store] = []

    def make(name: str = "main") -> Store:
        store = SQLiteStore(tmp_path / name / "memstrata.db", ann_min_rows=0)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
