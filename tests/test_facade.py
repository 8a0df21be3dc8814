"""The facade's shape: immutable tenant and scope views over one core, sub-APIs that are the same code
paths as the shortcuts, add() options that cannot contradict, and failures that are loud."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata import Embedder, InvalidInputError, JobFailedError, Memory
from memstrata.config import load_settings
from memstrata.storage.protocol import Store
from memstrata.types import JobStatus, Message


def test_scoped_view_fills_in_and_guards_its_scope(memory: Memory) -> None:
    lin = memory.scoped(user_id="lin")
    added = lin.add("我对花生过敏").results[0]
    assert memory.get(added.id, user_id="lin").text == "我对花生过敏"
    assert [hit.id for hit in lin.search("peanut allergy")] == [added.id]
    with pytest.raises(InvalidInputError, match="bound to user_id='lin'"):
        lin.search("peanut", user_id="mallory")
    assert lin.scoped(session_id="s1").add("今天在开会").results[0].id  # narrowing keeps the user
    with pytest.raises(InvalidInputError):
        memory.scoped()


def test_tenant_views_are_separate_and_closing_a_view_keeps_the_store_open(memory: Memory) -> None:
    acme, globex = memory.for_tenant("acme"), memory.for_tenant("globex")
    secret = acme.add("The launch code name is Bluebird", user_id="u1").results[0]
    assert globex.search("launch code name", user_id="u1") == []
    assert [hit.id for hit in acme.search("launch code name", user_id="u1")] == [secret.id]
    assert memory.search("launch code name", user_id="u1") == []  # the default tenant is a tenant too
    globex.close()
    assert acme.get(secret.id, user_id="u1").text.startswith("The launch")
    assert acme.tenant_id == "acme" and memory.tenant_id is None


def test_unknown_scope_keywords_are_refused(memory: Memory) -> None:
    with pytest.raises(TypeError, match="unexpected keyword"):
        memory.search("x", user="u1")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("payload", "options", "message"),
    [
        ("I like tea", {"infer": True, "kind": "preference"}, "cannot be combined with infer=True"),
        ("I like tea", {"infer": True, "confidence": 0.4}, "cannot be combined with infer=True"),
        ([{"role": "user", "content": "I like tea"}], {"key": "me:drink:tea"}, "apply to plain texts"),
        ([{"role": "user", "content": "hi"}], {"event_time": datetime(2024, 1, 1, tzinfo=UTC)}, "plain texts"),
        ("I like tea", {"wait": True}, "wait=True only applies with infer=True"),
    ],
)
def test_add_options_that_would_be_ignored_are_refused(
    memory: Memory, payload: object, options: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidInputError, match=message):
        memory.add(payload, user_id="u1", **options)  # type: ignore[arg-type]
    assert memory.messages(user_id="u1") == [] and memory.get_all(user_id="u1") == []


class Exploding:
    """An extractor that raises something other than ProviderError (a bug, an overflow...)."""

    name = "exploding"

    def extract(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("extractor blew up")


def test_flush_raises_for_a_job_that_failed_and_the_turns_stay(store: Store, embedder: Embedder) -> None:
    memory = Memory(store, embedder, extractor=Exploding(), settings=load_settings({"write": {"background": False}}))
    turn = Message(role="user", content="I moved to Hangzhou last month")
    with pytest.raises(JobFailedError, match="extractor blew up") as failure:
        memory.add([turn], user_id="u1", infer=True, wait=True)
    (job,) = failure.value.jobs
    assert job.status == JobStatus.FAILED
    assert [stored.message.content for stored in memory.messages(user_id="u1")] == [turn.content]
    assert memory.flush(user_id="u1")[0].id == job.id  # an old failure is returned, not raised again


def test_sub_apis_and_shortcuts_are_one_code_path(memory: Memory) -> None:
    item = memory.add("Passport expires in 2031", user_id="u1").results[0]
    memory.lifecycle.archive(item.id, user_id="u1")
    assert memory.get(item.id, user_id="u1").status.value == "archived"
    memory.restore(item.id, user_id="u1")
    events = [event.action.value for event in memory.history(item.id, user_id="u1")]
    assert events == ["ADD", "ARCHIVE", "RESTORE"]
    assert memory.admin.stats(user_id="u1").memories_by_status == memory.stats(user_id="u1").memories_by_status


def test_forget_and_delete_record_what_happened_and_who_asked(memory: Memory) -> None:
    kept = memory.add("I live in Hangzhou", user_id="u1").results[0]
    gone = memory.add("My ex-colleague Zhang works at Tencent", user_id="u1").results[0]
    result = memory.lifecycle.forget("Zhang at Tencent", user_id="u1", confirm=True, actor="cli")
    assert [m.id for m in result.matched] == [gone.id]
    last = memory.history(gone.id, user_id="u1")[-1]
    assert (last.action.value, last.actor, last.reason) == ("DELETE", "cli", "forget: Zhang at Tencent")
    assert memory.get(kept.id, user_id="u1").status.value == "active"
