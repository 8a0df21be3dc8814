"""Jobs fail loudly and alone: any exception marks the job failed with its error; the good job queued beside a
poison job is still processed; progress is reported stage by stage."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.errors import JobFailedError
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock
from memstrata.types import JobStatus, Message
from memstrata.write.decisions import Extraction
from memstrata.write.extract import CallStats, LLMExtractor
from memstrata.write.progress import Progress
from memstrata.write.reconcile import LLMReconciler
from memstrata.write.rules_extractor import RulesExtractor
from support.scripted_llm import Reply, ScriptedServer, completion
from write.conftest import scripted_chat


class BuggyExtractor(RulesExtractor):
    """A plug-in extractor with a bug: it raises on one kind of input (not a model error)."""

    name = "buggy"

    def extract(self, turns: Sequence[Message], *, stats: CallStats | None = None) -> Extraction:
        if any("POISON" in turn.content for turn in turns):
            raise OverflowError("date value out of range")
        return super().extract(turns, stats=stats)


def _memory(store: Store, embedder: UniversalSentenceEncoder, **kwargs: object) -> Memory:
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    return Memory(store, embedder, settings=settings, **kwargs)  # type: ignore[arg-type]


def _jobs(memory: Memory, user: str) -> dict[str, JobStatus]:
    return {job.id: job.status for job in memory.list_jobs(user_id=user)}


def test_a_raising_extractor_fails_its_job_only(store: Store, embedder: UniversalSentenceEncoder) -> None:
    memory = _memory(store, embedder, extractor=BuggyExtractor())
    poison = memory.add("POISON: I like jazz", user_id="u1", infer=True)
    good = memory.add("I like green tea.", user_id="u1", infer=True)
    with pytest.raises(JobFailedError) as failure:
        memory.flush(user_id="u1")  # both jobs are claimed together, fail together, then run one by one
    assert [job.id for job in failure.value.jobs] == [poison.job_id]

    jobs = {job.id: job for job in memory.list_jobs(user_id="u1")}
    assert jobs[good.job_id].status == JobStatus.DONE  # type: ignore[index]
    failed = jobs[poison.job_id]  # type: ignore[index]
    assert failed.status == JobStatus.FAILED and failed.error == "OverflowError: date value out of range"
    facts = memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"]})
    assert [f.text for f in facts] == ["I like green tea."]
    assert memory.messages(user_id="u1")[0].message.content == "POISON: I like jazz"  # the turn is kept


def test_a_turn_dated_9999_12_31_never_blocks_the_queue(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer
) -> None:
    far = datetime(9999, 12, 31, 23, 59, tzinfo=UTC)
    chat = scripted_chat(server)
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    clock = ManualClock(datetime(9999, 12, 31, tzinfo=UTC))  # the calendar's last day: a later turn is refused
    scripted_memory = Memory(store, embedder, settings=settings, extractor=LLMExtractor(chat),
                             reconciler=LLMReconciler(chat), clock=clock)  # fmt: skip
    facts = {"我明天见老板": "用户明天见老板", "我喜欢爵士乐": "用户喜欢爵士乐"}

    def extract(request: dict[str, Any]) -> Reply:
        lines = str(request["messages"][-1]["content"]).splitlines()
        found = [{"turn": int(line[1]), "text": facts[line.split(": ", 1)[1]]} for line in lines]
        return completion({"facts": found})

    server.answer_with(extract)
    scripted_memory.add(
        [{"role": "user", "content": "我明天见老板", "timestamp": far}, {"role": "user", "content": "我喜欢爵士乐"}],
        user_id="u1",
        infer=True,
        wait=True,
    )
    [job] = scripted_memory.list_jobs(user_id="u1")
    assert job.status == JobStatus.DONE, job.error  # "明天" past 9999-12-31 is no date: the fact stays undated
    boss = next(f for f in scripted_memory.get_all(user_id="u1") if f.text == "用户明天见老板")
    assert boss.event_time is None and boss.valid_from == far


def test_garbage_for_one_job_does_not_fail_the_job_beside_it(scripted_memory: Memory, server: ScriptedServer) -> None:
    def respond(request: dict[str, Any]) -> Reply:
        if any("POISON" in str(message["content"]) for message in request["messages"]):  # repairs too
            return completion("no JSON here")
        return completion({"facts": [{"turn": 1, "text": "User likes green tea"}]})

    server.answer_with(respond)
    poison = scripted_memory.add("POISON I like jazz", user_id="u1", infer=True)
    good = scripted_memory.add("I like green tea.", user_id="u1", infer=True)
    with pytest.raises(JobFailedError):
        scripted_memory.flush(user_id="u1")
    jobs = {job.id: job for job in scripted_memory.list_jobs(user_id="u1")}
    assert jobs[good.job_id].status == JobStatus.DONE  # type: ignore[index]
    assert jobs[poison.job_id].status == JobStatus.FAILED  # type: ignore[index]
    assert "no JSON here" in (jobs[poison.job_id].raw_output or "")  # type: ignore[index]


def test_progress_reports_each_stage(scripted_memory: Memory, server: ScriptedServer) -> None:
    scripted_memory.add("User likes coffee", user_id="u1")
    server.enqueue(
        completion({"facts": [{"turn": 1, "text": "User prefers tea now"}, {"turn": 2, "text": "User has a cat"}]})
    )
    server.answer_with(lambda request: completion({"1": "contradicts"}))
    seen: list[Progress] = []
    scripted_memory.add(["I prefer tea now.", "I have a cat."], user_id="u1", infer=True)
    scripted_memory.flush(user_id="u1", progress=seen.append)
    stages = [(p.stage, p.done, p.total) for p in seen]
    assert stages[0] == ("extract", 0, 2) and ("extract", 2, 2) in stages
    assert ("judge", 1, 2) in stages and ("judge", 2, 2) in stages and stages[-1] == ("done", 1, 1)
    assert all(b.seconds >= a.seconds for a, b in itertools.pairwise(seen))
    assert "judge 2/2 facts" in seen[-2].describe() or "write" in seen[-2].describe()


def test_failed_jobs_are_reported_by_job_failed_error(store: Store, embedder: UniversalSentenceEncoder) -> None:
    memory = _memory(store, embedder, extractor=BuggyExtractor())
    with pytest.raises(JobFailedError):
        memory.add("POISON", user_id="u1", infer=True, wait=True)
    failed = memory.list_jobs(user_id="u1", status=["failed"])
    error = JobFailedError(failed)
    assert error.jobs == failed and failed[0].id in str(error) and "retry_job" in str(error)
    assert "OverflowError" in str(error)
