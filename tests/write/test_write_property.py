"""Property: no sequence of model outputs (random, adversarial, garbage, errors) makes a memory disappear
without a history event naming the turn that caused it; every job ends done or failed; every extracted fact
of a finished job is accounted for. The model is a scripted server at the HTTP boundary whose replies
hypothesis draws."""

from __future__ import annotations

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import Memory
from memstrata.types import JobStatus, MemoryStatus
from support.scripted_llm import Reply, ScriptedServer, completion

SEED = [
    "User likes coffee",
    "User lives in Paris",
    "用户喜欢喝乌龙茶",
    "用户的妹妹叫林小雨",
    "User has a dog named Rex",
]
POOL = [*SEED, "User prefers tea", "User moved to Berlin", "用户不再喝乌龙茶", "User sold the dog", "用户住在巴黎",
        "User likes coffee.", "", "   ", "用户喜欢喝乌龙茶。"]  # fmt: skip
ANSWERS = ["same", "conflict", "compatible", "contradicts", "maybe", ""]
_users = itertools.count()

texts = st.one_of(st.sampled_from(POOL), st.text(max_size=30))
extraction = st.lists(st.tuples(st.integers(-1, 3), texts), max_size=5).map(
    lambda facts: completion({"facts": [{"turn": turn, "text": text} for turn, text in facts]})
)
garbage = st.one_of(
    st.sampled_from(["", "not json", "{", '{"facts": "x"}', '{"1": "maybe"}', "null", "[]", '{"facts": []}']),
    st.text(max_size=40),
).map(completion)
failure = st.sampled_from([Reply(500, "boom"), Reply(400, '{"error": "bad request"}'), Reply(200, "<html>")])


def _judge(answer: str) -> Reply:
    """A verdict, valid or not, whatever the request was."""
    return completion({"answer": answer})


judge = st.sampled_from(ANSWERS).map(_judge)
replies = st.lists(st.one_of(extraction, judge, garbage, failure), min_size=1, max_size=8)


def _by_id(memory: Memory, user: str) -> dict[str, MemoryStatus]:
    items = memory.get_all(user_id=user, filters={"exclude_kind": ["episode"], "status": list(MemoryStatus)}, limit=500)
    return {item.id: item.status for item in items}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    script=replies, turn=st.sampled_from(["I prefer tea now and moved to Berlin.", "我不再喝乌龙茶了，我妹妹搬家了。"])
)
def test_no_model_output_makes_a_memory_disappear_silently(
    scripted_memory: Memory, server: ScriptedServer, script: list[Reply], turn: str
) -> None:
    user = f"u{next(_users)}"
    scripted_memory.add(SEED, user_id=user)
    before = _by_id(scripted_memory, user)
    server.replies.clear()
    server.enqueue(*script)
    result = scripted_memory.add(turn, user_id=user, infer=True, wait=True)

    [job] = [job for job in scripted_memory.list_jobs(user_id=user) if job.id == result.job_id]
    assert job.status in (JobStatus.DONE, JobStatus.FAILED)
    if job.status == JobStatus.FAILED:
        assert job.error
    after = _by_id(scripted_memory, user)
    live = (MemoryStatus.ACTIVE, MemoryStatus.PENDING)
    for memory_id, status in before.items():
        if status in live and after[memory_id] not in live:
            events = scripted_memory.history(memory_id, user_id=user)
            closing = [e for e in events if e.action.value in ("UPDATE", "DELETE")]
            assert closing, f"{memory_id} closed without an event"
            assert any(set(result.message_ids) <= set(e.details.get("message_ids", [])) for e in closing)
    if job.status == JobStatus.DONE:
        decided = {entry["fact"] for entry in job.result["decisions"]}
        assert decided == set(range(job.result["facts"])), json.dumps(job.result, ensure_ascii=False)[:500]
