"""Schemathesis against the served OpenAPI document: generated requests, valid and invalid, never get a 5xx.

Bounded: a fixed number of examples over all operations together, against the real server over HTTP.
"""

from __future__ import annotations

from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="pip install schemathesis (the dev extra)")
pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from service_support import Service  # noqa: E402


@pytest.mark.parametrize(
    ("mode", "examples"),
    [(schemathesis.GenerationMode.POSITIVE, 150), (schemathesis.GenerationMode.NEGATIVE, 100)],
)
def test_generated_requests_get_no_server_error(svc: Service, mode: Any, examples: int) -> None:
    schema = schemathesis.openapi.from_url(f"{svc.url}/openapi.json")
    auth = svc.auth(svc.token("fuzz"))  # its own tenant: whatever it writes stays out of the other tests' way

    @settings(
        max_examples=examples,
        deadline=None,
        phases=[Phase.generate],
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=schema.as_strategy(generation_mode=mode, headers=auth))
    def check(case: Any) -> None:
        case.call_and_validate(base_url=svc.url, checks=[not_a_server_error], timeout=30)

    check()
