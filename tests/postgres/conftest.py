"""PostgreSQL-only tests: a fresh database per test on the session's server (see tests/conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def pg_url(postgres_databases: Any, request: pytest.FixtureRequest) -> str:
    url: str = postgres_databases.create(request.node.nodeid)
    return url
