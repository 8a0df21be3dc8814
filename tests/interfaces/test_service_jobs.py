"""A service runs the shared queue from its start: jobs another process queued and left are picked up."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service tests need the server extra: pip install -e '.[server]'")

from fastapi.testclient import TestClient

from memstrata import Memory
from memstrata.api.keys import KeyStore
from memstrata.config import ServerSettings, load_settings
from memstrata.service.app import create_app
from memstrata.types import JobStatus


def test_a_new_service_runs_jobs_queued_before_it_started(tmp_path: Path) -> None:
    """A restarted server left the queued jobs of the process that died queued until it queued one itself."""
    config = {"store": {"path": str(tmp_path / "m.db")}, "llm": {"provider": "rules"}}
    with Memory.from_config(load_settings({**config, "write": {"background": False}})) as gone:
        job_id = gone.add("I moved to Chengdu in 2024. 我的狗叫包子。", user_id="u1", infer=True).job_id
        assert gone.jobs.list(user_id="u1")[0].status == JobStatus.QUEUED  # no worker ran it
    keys = KeyStore(tmp_path / "keys.db")
    with (
        Memory.from_config(load_settings(config)) as memory,
        TestClient(create_app(memory, ServerSettings(), keys=keys)),
    ):
        deadline = time.monotonic() + 30
        while memory.jobs.list(user_id="u1")[0].status != JobStatus.DONE and time.monotonic() < deadline:
            time.sleep(0.1)
        [job] = memory.jobs.list(user_id="u1")
        assert job.id == job_id and job.status == JobStatus.DONE
        assert memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"]})  # its facts landed
    keys.close()
