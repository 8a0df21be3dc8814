"""Fixtures for the service tests. One server per module keeps the set fast; tests use their own scopes.

The server packages are imported inside the fixtures, so test_cli.py still runs without the extra.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from memstrata.providers.use_embedder import UniversalSentenceEncoder

if TYPE_CHECKING:
    from service_support import Service


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder) -> Iterator[Service]:
    """A keyed server (no anonymous access) on a fresh store, with a 64 KiB request limit."""
    pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")
    from service_support import service

    with service(tmp_path_factory.mktemp("service"), embedder, max_request_bytes=65_536) as running:
        yield running
