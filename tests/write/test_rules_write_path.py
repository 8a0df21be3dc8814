"""infer=True without a model: the rules extractor, the durable queue, trigger policy, exact duplicates.

The Memory here has no extractor configured, so it uses the bilingual rules (the documented last
fallback). Model-driven behaviour is tested against a scripted HTTP server and the real local model.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock
from memstrata.types import JobStatus
from memstrata.write import pipeline


def _facts(memory: Memory, user: str) -> list[str]:
    return sorted(m.text for m in memory.get_all(user_id=user, filters={"exclude_kind": ["episode"]}))


def test_add_returns_at_once_and_flush_extracts(memory: Memory) -> None:
    memory.settings.write.background = False  # this test drives the queue itself
    started = time.perf_counter()
    result = memory.add(
        [{"role": "user", "content": "我叫李明，住在杭州。我对花生过敏。今天天气不错。"}], user_id="u1", infer=True
    )
    assert time.perf_counter() - started < 0.5  # no model, no embedding on the caller's path
    assert result.job_id is not None and len(result.message_ids) == 1
    assert memory.messages(user_id="u1")[0].message.content == "我叫李明，住在杭州。我对花生过敏。今天天气不错。"
    assert memory.search("花生", user_id="u1")[0].memory.kind == "episode"  # raw turn searchable at once

    jobs = memory.flush(user_id="u1")
    assert [job.status for job in jobs] == [JobStatus.DONE]
    assert _facts(memory, "u1") == ["我叫李明，住在杭州。", "我对花生过敏。"]  # Chinese stays Chinese
    assert jobs[0].result["model_calls"] == 0 and jobs[0].result["extractor"] == "rules"
    fact = next(m for m in memory.get_all(user_id="u1") if m.text == "我对花生过敏。")
    assert fact.provenance.message_ids == result.message_ids  # provenance back to the raw turn
    assert memory.history(fact.id, user_id="u1")[0].actor == "rules"


def test_small_talk_gives_no_facts(memory: Memory) -> None:
    memory.settings.write.background = False
    memory.add(["今天天气不错", "nice weather today", "How are you?"], user_id="u1", infer=True)
    memory.flush(user_id="u1")
    assert _facts(memory, "u1") == []


def test_cue_policy_waits_for_a_cue_then_extracts_the_batch(memory: Memory) -> None:
    memory.settings.write.background = False
    first = memory.add("The meeting room is on the third floor.", user_id="u1", session_id="s", infer=True)
    assert memory.list_jobs(user_id="u1", status=["waiting"])[0].id == first.job_id
    memory.add("I love jazz and I'm planning a trip to New Orleans.", user_id="u1", session_id="s", infer=True)
    assert memory.list_jobs(user_id="u1", status=["waiting"]) == []
    memory.flush(user_id="u1")
    assert _facts(memory, "u1") == ["I love jazz and I'm planning a trip to New Orleans."]
    assert {job.status for job in memory.list_jobs(user_id="u1")} == {JobStatus.DONE}


def test_exact_duplicates_short_circuit_to_none(memory: Memory) -> None:
    memory.settings.write.background = False
    memory.add("I like green tea.", user_id="u1", infer=True, wait=True)
    jobs = memory.add("I like green tea.", user_id="u1", infer=True, wait=True)
    assert _facts(memory, "u1") == ["I like green tea."]
    last = memory.list_jobs(user_id="u1")[-1]
    assert last.id == jobs.job_id
    assert [d["action"] for d in last.result["decisions"]] == ["NONE"]


def test_background_worker_processes_without_flush(memory: Memory) -> None:
    memory.settings.write.background = True
    memory.add("Remember that my locker code is 4512.", user_id="u1", infer=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _facts(memory, "u1"):
        time.sleep(0.05)
    assert _facts(memory, "u1") == ["Remember that my locker code is 4512."]
    memory.close()


def test_the_rules_keep_moves_and_statements_with_an_adverb() -> None:
    from memstrata.types import Message
    from memstrata.write.rules_extractor import RulesExtractor

    said = ["我搬到深圳了，现在住在深圳。", "我现在在腾讯工作。", "目前在字节跳动上班", "I just moved to Berlin.",
            "I now work at DJI.", "我去年搬到上海了。", "我上个月就搬到深圳了", "我2023年3月在阿里上班"]  # fmt: skip
    for text in said:
        facts = RulesExtractor().extract([Message(role="user", content=text)]).facts
        assert [fact.text for fact in facts] == [text.rstrip("。")] or [f.text for f in facts] == [text], text


def test_how_the_speaker_feels_at_the_moment_is_no_fact() -> None:
    """ "I'm so hungry right now" was stored as a long-term fact (it stays an episode, the turn it was said in)."""
    from memstrata.types import Message
    from memstrata.write.rules_extractor import RulesExtractor

    def facts(text: str) -> list[str]:
        return [fact.text for fact in RulesExtractor().extract([Message(role="user", content=text)]).facts]

    for passing in ("I'm so hungry right now", "I am really tired today.", "今天好累啊", "我好饿"):
        assert facts(passing) == [], passing
    for lasting in (
        "I live in Berlin right now",
        "I'm hot-tempered",
        "I'm busy with the Atlas migration",
        "我有一只猫",
    ):
        assert facts(lasting) == [lasting], lasting
    assert facts("remember that I am so tired of meetings") == ["remember that I am so tired of meetings"]


def test_a_fact_another_writer_stores_meanwhile_is_not_stored_twice(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes extracting for one user (different sessions, one user scope) each planned the same new fact
    and both wrote it. The job's write now refuses a current text stored meanwhile, and the job decides again."""
    memory.settings.write.background = False
    turn = {"role": "user", "content": "我叫李明，住在杭州。我对花生过敏。"}
    memory.add([turn], user_id="u1", session_id="a", infer=True)
    plan_graph = pipeline._plan_graph

    def another_writer_first(*args: Any, **kwargs: Any) -> Any:
        if not raced:  # between this job's decisions and its write, as a second process would
            raced.append(memory.add("我对花生过敏。", user_id="u1", kind="fact").results[0].id)
        return plan_graph(*args, **kwargs)

    raced: list[str] = []
    monkeypatch.setattr(pipeline, "_plan_graph", another_writer_first)
    (job,) = memory.flush(user_id="u1", session_id="a")

    assert job.status == JobStatus.DONE, job.error
    assert _facts(memory, "u1") == ["我叫李明，住在杭州。", "我对花生过敏。"]
    assert [entry["action"] for entry in job.result["decisions"]].count("NONE") == 1


def test_the_background_worker_hands_over_the_turns_of_a_session_gone_quiet(
    store: Store, embedder: UniversalSentenceEncoder
) -> None:
    """A user trial over MCP: a short session added with infer waited for more turns, and with no one ending the
    session or running maintenance its facts never came. The worker hands over what waits once the session has been
    quiet for ``lifecycle.session_ttl_minutes``."""
    clock = ManualClock(datetime(2026, 3, 2, 9, 0, tzinfo=UTC))
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    memory = Memory(store, embedder, settings=settings, clock=clock)
    added = memory.add("The meeting room is on the third floor.", user_id="u1", session_id="s", infer=True)
    assert memory.list_jobs(user_id="u1", status=["waiting"])[0].id == added.job_id
    clock.advance(minutes=31)
    memory.settings.write.background = True
    memory.jobs.start_worker()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and memory.list_jobs(user_id="u1")[0].status != JobStatus.DONE:
        time.sleep(0.05)
    assert [job.status for job in memory.list_jobs(user_id="u1")] == [JobStatus.DONE]
    memory.close()
