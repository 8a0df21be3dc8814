"""Killing the worker mid-job: on restart the job resumes, no turn is lost, nothing is applied twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata import ConflictError, Memory
from memstrata.config import load_settings
from memstrata.providers.openai_chat import OpenAICompatibleChat
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import JobUpdate, WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import JobStatus
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler
from support.scripted_llm import Reply, ScriptedServer, completion

CHILD = textwrap.dedent(
    """
    import sys
    from memstrata import Memory
    from memstrata.config import load_settings
    from memstrata.providers.openai_chat import OpenAICompatibleChat
    from memstrata.providers.use_embedder import UniversalSentenceEncoder
    from memstrata.storage.sqlite.store import SQLiteStore
    from memstrata.write.extract import LLMExtractor
    from memstrata.write.reconcile import LLMReconciler

    path, url = sys.argv[1], sys.argv[2]
    chat = OpenAICompatibleChat(url, "scripted", timeout_s=60, max_attempts=1, transport_retries=0)
    settings = load_settings({"store": {"path": path}, "write": {"background": False, "lease_s": 1}})
    memory = Memory(SQLiteStore(path), UniversalSentenceEncoder(), settings=settings,
                    extractor=LLMExtractor(chat), reconciler=LLMReconciler(chat))
    memory.add("I started learning Rust. 我还报了一个日语班。", user_id="u1", infer=True)
    print("stored", flush=True)
    memory.flush()  # blocks inside the model call until the parent kills us
    """
)


@pytest.mark.slow
def test_killed_worker_resumes_without_loss_or_double_apply(
    tmp_path: Path, server: ScriptedServer, embedder: UniversalSentenceEncoder
) -> None:
    path = str(tmp_path / "crash.db")
    server.enqueue(Reply(delay_s=60))  # the first worker hangs in extraction
    child = subprocess.Popen([sys.executable, "-c", CHILD, path, server.base_url], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "stored"
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the child never reached the model"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)

    store = SQLiteStore(path)
    [job] = store.list_jobs(None, [JobStatus.RUNNING], limit=10)
    assert job.attempts == 1  # claimed by the dead worker, lease of 1 s
    time.sleep(1.2)

    chat = OpenAICompatibleChat(server.base_url, "scripted", timeout_s=5, max_attempts=1, transport_retries=0)
    memory = Memory(store, embedder, settings=load_settings({"store": {"path": path}, "write": {"background": False}}),
                    extractor=LLMExtractor(chat), reconciler=LLMReconciler(chat))  # fmt: skip
    server.enqueue(completion({"facts": [{"text": "User is learning Rust", "kind": "fact", "sources": [1]},
                                         {"text": "用户报了日语班", "kind": "fact", "sources": [1]}]}))  # fmt: skip
    [done] = memory.flush()
    assert done.id == job.id and done.status == JobStatus.DONE and done.attempts == 2
    facts = memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"]})
    assert sorted(f.text for f in facts) == ["User is learning Rust", "用户报了日语班"]
    assert [t.message.content for t in memory.messages(user_id="u1")] == [
        "I started learning Rust. 我还报了一个日语班。"
    ]
    assert memory.stats(user_id="u1").vectors == 3  # the episode got its vector in the resumed job

    # The dead worker's late completion (attempt 1) is refused: its decisions can never land a second time.
    stale = JobUpdate(job.id, JobStatus.DONE, datetime.now(UTC), result={}, expected_attempts=1)
    with pytest.raises(ConflictError, match="claimed again"):
        store.write(WriteBatch(job_updates=[stale]))
    assert len(memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"]})) == 2
    memory.close()
