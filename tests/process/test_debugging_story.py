"""Issue 17's scenario, with the real embedder, on both backends, in English and in Chinese: task 1 tried A
and B (dead ends) and then C (the fix); for a similar bug, recall puts C's path first and check_plan flags
A and B before the agent spends the time."""

from __future__ import annotations

from memstrata import Memory
from memstrata.records.process import StepStatus, TaskStatus
from process.conftest import STORIES, Story, record_story


def test_recall_returns_the_fix_path_first(memory: Memory, story: Story) -> None:
    recorded = record_story(memory, story, user_id="u1", session_id="monday")
    ids = recorded.step_ids
    assert recorded.task.status == TaskStatus.SUCCEEDED and recorded.task.compressed

    # A new session, a similar bug: the handle's reads use the user's long-term scope.
    with memory.tasks.start(story.new_goal, task_type="debugging", user_id="u1", session_id="tuesday") as task:
        recalled = task.recall()
        first = recalled[0]
        assert first.task.id == recorded.task.id, [r.task.goal for r in recalled]
        path = [step.id for step in first.path]
        assert path == [ids["read"], ids["hC"], ids["C"]]  # read the logs, suspect the key, rotate it
        assert {step.id for step in first.dead_ends} == {ids["A"], ids["B"], ids["hA"], ids["hB"]}
        assert all(step.status == StepStatus.SUCCEEDED for step in first.path)
        assert first.breakdown.relevance >= memory.settings.process.min_relevance
        assert all(other.score < first.score for other in recalled[1:])

        warnings = task.check_plan([{"action": action, "input": text} for action, text in story.plan])
        flagged = {warning.index: warning for warning in warnings}
        assert set(flagged) == {0, 1}, [(w.index, w.dead_end.input, w.similarity) for w in warnings]
        assert flagged[0].dead_end.id == ids["A"] and flagged[1].dead_end.id == ids["B"]
        assert flagged[0].task.goal == story.goal and flagged[0].dead_end.output.startswith("still 500")
        assert flagged[0].refuted and flagged[0].refuted[0].text == story.hypotheses[0]
        assert story.attempts[0] in flagged[0].message
        task.finish("known fix applied", status="succeeded")


def test_the_same_story_without_compression_and_without_a_task_handle(memory: Memory, story: Story) -> None:
    """Scope-level calls (as REST and MCP make them), chains left uncompressed: the same answers."""
    memory.settings.process.compress_on_finish = False
    recorded = record_story(memory, story, user_id="u1")
    assert not recorded.task.compressed
    [first, *_] = memory.tasks.recall(story.new_goal, user_id="u1", task_type="debugging")
    assert first.task.id == recorded.task.id and first.path[-1].id == recorded.step_ids["C"]
    planned = [{"action": action, "input": text} for action, text in story.plan]
    assert {w.index for w in memory.tasks.check_plan(None, planned, user_id="u1")} == {0, 1}
    # A different action type is not the same step, however similar the words.
    assert memory.tasks.check_plan(None, [{"action": "search", "input": story.plan[0][1]}], user_id="u1") == []


def test_a_failed_step_is_shown_the_sibling_that_worked(memory: Memory, story: Story) -> None:
    recorded = record_story(memory, story, user_id="u1")
    ids = recorded.step_ids
    with memory.tasks.start(story.new_goal, task_type="debugging", user_id="u1") as task:
        with task.step("hypothesize", input=story.hypotheses[0]), task.step("run", input=story.plan[0][1]) as tried:
            tried.dead_end("no change")
        found = memory.tasks.alternatives(tried.id, user_id="u1")
    # The recorded attempt like it (A) failed under a refuted hypothesis; what worked beside that hypothesis
    # was reading the logs and the hypothesis that led to the fix.
    siblings = {alternative.sibling.id: alternative for alternative in found}
    assert ids["hC"] in siblings, [(a.failed.input, a.sibling.input) for a in found]
    assert siblings[ids["hC"]].failed.id == ids["hA"] and siblings[ids["hC"]].task.id == recorded.task.id
    assert ids["hB"] not in siblings  # a dead end is no alternative


def test_across_languages_an_english_history_warns_a_chinese_plan(memory: Memory) -> None:
    english, chinese = STORIES["en"], STORIES["zh"]
    recorded = record_story(memory, english, user_id="u1")
    [first, *_] = memory.tasks.recall(chinese.new_goal, user_id="u1")
    assert first.task.id == recorded.task.id
    planned = [{"action": action, "input": text} for action, text in chinese.plan]
    warnings = memory.tasks.check_plan(None, planned, user_id="u1")
    assert {w.index: w.dead_end.id for w in warnings} == {0: recorded.step_ids["A"], 1: recorded.step_ids["B"]}


def test_a_hypothesis_no_step_proposed_is_not_every_dead_ends_reason(memory: Memory) -> None:
    """A refuted hypothesis recorded without a step (step_id None) was attached to every top-level dead end of
    every task, as if it matched their missing parent."""
    with memory.tasks.start("登录接口返回 500", user_id="u1") as first:
        unlinked = first.hypothesize("数据库连接池耗尽")
        first.refute(unlinked.id)
        first.record("run", "restart the auth service", dead_end=True, output="still 500")
    with memory.tasks.start("支付回调超时", user_id="u1") as second:
        second.record("run", "重启支付服务", dead_end=True, output="依然超时")
    warnings = memory.tasks.check_plan(None, [{"action": "run", "input": "restart the payment service"},
                                              {"action": "run", "input": "restart the auth service"}],
                                       user_id="u1")  # fmt: skip
    assert warnings and all(warning.refuted == () for warning in warnings), [w.refuted for w in warnings]
