"""The strategy library: mined when tasks finish, re-scored as evidence arrives, failures kept as
counter-examples, queryable by task type and by context."""

from __future__ import annotations

from memstrata import Memory
from memstrata.process.mining import contains


def _debug(memory: Memory, platform: str, *, works: bool) -> str:
    with memory.tasks.start(f"Login fails after the deploy on {platform}", task_type="debugging",
                            user_id="u1", session_id=platform) as task:  # fmt: skip
        task.record("read", input=f"{platform} client logs", output="401 from /token")
        with (
            task.step("hypothesize", input="the token endpoint rejects the new client id"),
            task.step("run", input=f"register the {platform} client id again") as run,
        ):
            if not works:
                run.dead_end("still 401")
        if works:
            task.finish(f"{platform}: re-registering the client id fixed login")
        else:
            task.finish("gave up", status="failed")
    return task.id


def _research(memory: Memory, topic: str) -> None:
    with memory.tasks.start(f"Survey papers on {topic}", task_type="research", user_id="u1") as task:
        task.record("search", input=f"{topic} survey arxiv")
        task.record("read", input=f"top three {topic} papers")
        task.finish(f"summary of {topic}")


def test_sequences_are_mined_with_success_rates_and_counter_examples(memory: Memory) -> None:
    wins = [_debug(memory, platform, works=True) for platform in ("web", "ios", "android")]
    failed = _debug(memory, "windows", works=False)
    [best, *_] = memory.tasks.strategies(task_type="debugging", user_id="u1")
    assert best.actions == ("read", "hypothesize", "run")
    assert (best.successes, best.failures, best.support) == (3, 1, 4)
    assert best.confidence == round(4 / 6, 4)
    assert set(best.example_task_ids) == set(wins) and [c.task_id for c in best.counter_examples] == [failed]
    assert best.trigger["task_type"] == "debugging" and best.trigger["first_action"] == "read"
    assert {"login", "fails", "deploy"} <= set(best.trigger["keywords"])
    assert best.steps[0].example is not None and "client logs" in best.steps[0].example
    assert best.expected_outcome is not None and "re-registering" in best.expected_outcome
    assert best.scope.session_id is None  # mined over every session of the user

    # Evidence keeps arriving: another failure lowers the confidence of the same strategy, in place.
    _debug(memory, "linux", works=False)
    [again, *_] = memory.tasks.strategies(task_type="debugging", user_id="u1", min_confidence=0.0)
    assert again.id == best.id and again.memory_id == best.memory_id
    assert (again.successes, again.failures) == (3, 2) and again.confidence == round(4 / 7, 4)
    assert len(again.counter_examples) == 2 and again.created_at == best.created_at


def test_strategies_are_found_by_context(memory: Memory) -> None:
    for platform in ("web", "ios"):
        _debug(memory, platform, works=True)
    for topic in ("retrieval augmented generation", "graph neural networks"):
        _research(memory, topic)
    [debugging, *_] = memory.tasks.strategies(context="users cannot log in since the last release", user_id="u1")
    assert debugging.task_type == "debugging"
    [research, *_] = memory.tasks.strategies(context="调研最近关于检索增强生成的论文", user_id="u1")
    assert research.task_type == "research" and research.actions == ("search", "read")
    assert memory.tasks.strategies(user_id="someone-else") == []
    assert memory.tasks.strategies(user_id="u1", min_confidence=0.99) == []


def test_a_strategy_mined_from_both_languages_is_found_in_each(memory: Memory) -> None:
    """Its unit held only the newest task's steps: "降低搜索延迟" and "search latency too high" found nothing."""
    for goal, steps in (("降低搜索延迟到 10 ms 以内", ["用 py-spy 分析搜索", "把关键词倒排缓存在内存里"]),
                        ("Cut p95 search latency below 10 ms", ["profile the search with py-spy",
                                                              "cache keyword postings in memory"])):  # fmt: skip
        with memory.tasks.start(goal, task_type="perf", user_id="u1") as task:
            task.record("profile", input=steps[0])
            task.record("edit", input=steps[1])
            task.finish("p95 8 ms")
    for context in ("降低搜索延迟", "search latency too high"):
        found = memory.tasks.strategies(context=context, user_id="u1")
        assert [s.actions for s in found] == [("profile", "edit")], context


def test_an_action_sequence_is_matched_in_order_with_gaps() -> None:
    assert contains(("read", "search", "hypothesize", "run"), ("read", "run"))
    assert not contains(("run", "read"), ("read", "run"))
    assert contains(("read",), ())
