"""The LLM write path against a scripted OpenAI-compatible server (fixed replies over real HTTP):
decision types, integer-id mapping, validation and rollback, malformed output, timeouts, retry."""

from __future__ import annotations

import re
from typing import Any

import pytest

from memstrata import JobFailedError, Memory
from memstrata.types import JobStatus, MemoryStatus
from support.scripted_llm import Reply, ScriptedServer, completion

SEED = ["User likes coffee", "User lives in Paris", "User has a dog named Rex"]


def _existing_ids(request: dict[str, Any]) -> dict[str, int]:
    """Parse 'EXISTING:\\n0: text\\n1: text' from the reconcile prompt: text -> the integer the model sees."""
    prompt = request["messages"][-1]["content"]
    existing = prompt.split("EXISTING:\n", 1)[1].split("\nNEW:\n", 1)[0]
    return {line.split(": ", 1)[1]: int(line.split(": ", 1)[0]) for line in existing.splitlines() if ": " in line}


def _facts(*texts: str) -> Reply:
    return completion({"facts": [{"text": t, "kind": "preference", "confidence": 0.9, "sources": [1]} for t in texts]})


def _live(memory: Memory, user: str = "u1") -> dict[str, str]:
    items = memory.get_all(user_id=user, filters={"exclude_kind": ["episode"], "status": list(MemoryStatus)})
    return {item.text: item.status.value for item in items}


def test_every_decision_type_is_applied_through_integer_ids(scripted_memory: Memory, server: ScriptedServer) -> None:
    memory = scripted_memory
    memory.add(SEED, user_id="u1", kind="preference")

    def decide(request: dict[str, Any]) -> Reply:
        ids = _existing_ids(request)
        return completion(
            {
                "decisions": [
                    {"fact": 0, "action": "UPDATE", "target": ids["User likes coffee"], "text": "User prefers tea"},
                    {"fact": 1, "action": "DELETE", "target": ids["User has a dog named Rex"]},
                    {"fact": 2, "action": "ADD"},
                    {"fact": 3, "action": "NONE", "target": ids["User lives in Paris"]},
                ]
            }
        )

    server.enqueue(
        _facts("User now prefers tea", "User no longer has a dog", "User plays chess", "User is based in Paris",
               "User lives in Paris"),
        Reply(respond=decide),
    )  # fmt: skip
    result = memory.add("Tea now, not coffee. Rex passed away. I took up chess.", user_id="u1", infer=True, wait=True)

    assert _live(memory) == {
        "User likes coffee": "superseded",
        "User prefers tea": "active",
        "User lives in Paris": "active",
        "User has a dog named Rex": "deleted",
        "User plays chess": "active",
    }
    reconcile_prompt = server.requests[1]["messages"][-1]["content"]
    assert not re.search(r"[0-9a-f]{32}", reconcile_prompt), "memory UUIDs must never reach the model"
    assert "User lives in Paris" not in reconcile_prompt.split("NEW:")[1]  # exact duplicate: no model call
    job = memory.list_jobs(user_id="u1")[0]
    assert job.id == result.job_id and job.status == JobStatus.DONE
    assert sorted(d["action"] for d in job.result["decisions"]) == ["ADD", "DELETE", "NONE", "NONE", "UPDATE"]
    assert job.result["model_calls"] == 2 and job.result["prompt_tokens"] == 14

    tea = memory.search("tea", user_id="u1", limit=1, filters={"exclude_kind": ["episode"]})[0].memory
    assert tea.metadata["supersedes"] and tea.provenance.message_ids == result.message_ids  # source turn kept
    history = memory.history(tea.id, user_id="u1")
    assert [(e.action.value, e.old_text, e.new_text) for e in history] == [
        ("ADD", None, "User likes coffee"),
        ("UPDATE", "User likes coffee", "User prefers tea"),
    ]
    coffee = memory.get(tea.metadata["supersedes"], user_id="u1")
    assert coffee.valid_to is not None and coffee.status == MemoryStatus.SUPERSEDED


def test_invalid_decisions_roll_back_everything(scripted_memory: Memory, server: ScriptedServer) -> None:
    memory = scripted_memory
    memory.add(SEED, user_id="u1", kind="preference")
    twice = completion(
        {"decisions": [{"fact": 0, "action": "UPDATE", "target": 0, "text": "a"},
                       {"fact": 1, "action": "UPDATE", "target": 0, "text": "b"}]}
    )  # fmt: skip
    server.enqueue(_facts("User now prefers tea", "User prefers cocoa"), twice, twice)
    with pytest.raises(JobFailedError) as failure:
        memory.add("Tea. Or cocoa.", user_id="u1", infer=True, wait=True)

    job = memory.list_jobs(user_id="u1")[0]
    assert failure.value.jobs == [job] and job.id in str(failure.value)
    assert job.status == JobStatus.FAILED and "updated or deleted twice" in (job.error or "")
    assert "repair" not in (job.error or "") and "raw output" in (job.error or "")
    assert "Your decisions were invalid" in server.requests[-1]["messages"][-1]["content"]  # one repair attempt
    assert _live(memory) == {text: "active" for text in SEED}  # nothing applied
    assert [t.message.id for t in memory.messages(user_id="u1")] == list(job.message_ids)  # turn kept

    server.enqueue(_facts("User now prefers tea"), completion({"decisions": [{"fact": 0, "action": "ADD"}]}))
    memory.retry_job(job.id)
    memory.flush(user_id="u1")
    assert memory.list_jobs(user_id="u1")[0].status == JobStatus.DONE
    assert _live(memory)["User now prefers tea"] == "active"


def test_malformed_json_is_repaired(scripted_memory: Memory, server: ScriptedServer) -> None:
    server.enqueue(completion('{"facts": [{"text": "User runs marathons"'), _facts("User runs marathons"))
    scripted_memory.add("I run marathons.", user_id="u1", infer=True, wait=True)
    job = scripted_memory.list_jobs(user_id="u1")[0]
    assert job.status == JobStatus.DONE and job.result["attempts"] == 2
    assert _live(scripted_memory) == {"User runs marathons": "active"}


def test_garbage_output_fails_the_job_visibly_and_keeps_the_raw_output(
    scripted_memory: Memory, server: ScriptedServer
) -> None:
    server.enqueue(completion("I am not JSON at all"), completion("still not JSON"))
    with pytest.raises(JobFailedError):
        scripted_memory.add("I run marathons.", user_id="u1", infer=True, wait=True)
    job = scripted_memory.list_jobs(user_id="u1", status=["failed"])[0]
    assert "still not JSON" in (job.raw_output or "") and job.error
    assert _live(scripted_memory) == {}
    assert scripted_memory.messages(user_id="u1")[0].message.content == "I run marathons."


def test_timeout_fails_the_job_and_loses_nothing(scripted_memory: Memory, server: ScriptedServer) -> None:
    server.enqueue(Reply(delay_s=5), Reply(delay_s=5))
    with pytest.raises(JobFailedError):
        scripted_memory.add("我养了一只猫。", user_id="u1", infer=True, wait=True)
    job = scripted_memory.list_jobs(user_id="u1")[0]
    assert job.status == JobStatus.FAILED and job.error
    assert scripted_memory.search("猫", user_id="u1")[0].text == "我养了一只猫。"  # the raw turn is searchable


def test_a_fact_without_a_decision_is_kept(scripted_memory: Memory, server: ScriptedServer) -> None:
    scripted_memory.add("User likes jazz", user_id="u1", kind="preference")
    server.enqueue(
        _facts("User likes blues", "User plays piano"),
        completion({"decisions": [{"fact": 0, "action": "ADD"}]}),
    )
    scripted_memory.add("Blues and piano.", user_id="u1", infer=True, wait=True)
    decisions = scripted_memory.list_jobs(user_id="u1")[0].result["decisions"]
    assert {d["text"]: d["defaulted"] for d in decisions} == {"User likes blues": False, "User plays piano": True}
    assert _live(scripted_memory)["User plays piano"] == "active"


def test_decisions_about_facts_that_do_not_exist_are_ignored(scripted_memory: Memory, server: ScriptedServer) -> None:
    scripted_memory.add("User likes jazz", user_id="u1", kind="preference")
    server.enqueue(
        _facts("User likes blues"),
        completion({"decisions": [{"fact": 0, "action": "ADD"}, {"fact": 7, "action": "DELETE", "target": 0}]}),
    )
    scripted_memory.add("Blues too.", user_id="u1", infer=True, wait=True)
    assert scripted_memory.list_jobs(user_id="u1")[0].status == JobStatus.DONE
    assert _live(scripted_memory) == {"User likes jazz": "active", "User likes blues": "active"}


def test_small_talk_turns_never_reach_the_model(scripted_memory: Memory, server: ScriptedServer) -> None:
    scripted_memory.add(["今天天气真不错。", "Thanks, you too!", "好的，谢谢！"], user_id="u1", infer=True, wait=True)
    assert server.requests == []
    assert scripted_memory.list_jobs(user_id="u1")[0].result["model_calls"] == 0


def test_mixed_language_turns_are_extracted_per_language(scripted_memory: Memory, server: ScriptedServer) -> None:
    server.enqueue(_facts("用户住在杭州"), _facts("User is a nurse"))
    scripted_memory.add(["我住在杭州。", "I work as a nurse."], user_id="u1", infer=True, wait=True)
    prompts = server.user_prompts()
    assert len(prompts) == 2 and "杭州" in prompts[0] and "nurse" not in prompts[0] and "nurse" in prompts[1]
    assert set(_live(scripted_memory)) == {"用户住在杭州", "User is a nurse"}
