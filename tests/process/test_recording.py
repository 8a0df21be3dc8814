"""Recording: context managers and decorators, one durable write per step, validation at the edge, hypotheses,
artifacts, finishing, compression and restore. Real stores (both backends) and the real embedder."""

from __future__ import annotations

import pytest

from memstrata import ConflictError, InvalidInputError, Memory, NotFoundError
from memstrata.config import load_settings
from memstrata.process.recording import current_task, recorded
from memstrata.records.process import (
    ARTIFACT_KIND,
    STEP_KIND,
    SUMMARY_KIND,
    HypothesisStatus,
    StepStatus,
    TaskStatus,
)
from memstrata.storage.protocol import Store
from memstrata.types import MemoryStatus


def test_blocks_nest_into_a_tree_and_each_step_is_stored_when_it_begins(memory: Memory, embedder: object) -> None:
    other = Memory(memory.store, memory.embedder, settings=memory.settings)  # a second reader of the same store
    with memory.tasks.start("Find why the nightly ETL job is slow", task_type="analysis", user_id="u1") as task:
        with task.step("hypothesize", input="the join on orders lost its index") as idea:
            assert idea.step.hypothesis_id is not None  # a hypothesize step proposes its input
            with task.step("query", input="EXPLAIN the orders join", reasoning="check the plan") as check:
                seen = other.tasks.step(check.id, user_id="u1")
                assert seen.status == StepStatus.RUNNING and seen.parent_id == idea.id
                assert seen.hypothesis_id == idea.step.hypothesis_id  # it tests the enclosing hypothesis
                check.output = "Seq Scan on orders"
                check.tokens = 120
        with pytest.raises(RuntimeError), task.step("run", input="rebuild the orders index") as broken:
            raise RuntimeError("permission denied")
        task.record("read", input="job log", output="ok", cost_seconds=4.5, tags={"source": "airflow"})
    tree = memory.tasks.tree(task.id, user_id="u1")
    by_action = {step.action: step for step in tree.steps}
    assert [depth for depth, _ in tree.ordered()] == [0, 1, 0, 0]
    assert by_action["query"].output == "Seq Scan on orders" and by_action["query"].cost_tokens == 120
    assert by_action["query"].cost_seconds is not None and by_action["query"].ended_at is not None
    assert by_action["run"].status == StepStatus.FAILED and by_action["run"].output == "RuntimeError: permission denied"
    assert by_action["read"].tags == {"source": "airflow"} and by_action["read"].cost_seconds == 4.5
    assert broken.step.status == StepStatus.FAILED
    assert tree.task.status == TaskStatus.SUCCEEDED  # the block ended normally
    assert [h.text for h in tree.hypotheses] == ["the join on orders lost its index"]


def test_an_error_leaving_the_task_block_fails_the_task(memory: Memory) -> None:
    started = memory.tasks.start("Parse the vendor feed", user_id="u1")
    with pytest.raises(ValueError, match="bad input"), started as task:
        task.record("read", input="feed.xml")
        raise ValueError("bad input")
    failed = memory.tasks.get(task.id, user_id="u1")
    assert failed.status == TaskStatus.FAILED and failed.outcome == "ValueError: bad input"


def test_decorators_record_tool_calls(memory: Memory) -> None:
    calls: list[str] = []

    @recorded("search")
    def web_search(query: str, *, top: int = 3) -> list[str]:
        calls.append(query)
        return [f"{query} result\x00{n}" for n in range(top)]  # tools return anything, NUL included

    assert web_search("no task open") == [f"no task open result\x00{n}" for n in range(3)]  # just runs
    with memory.tasks.start("Compare two vector databases", task_type="research", user_id="u1") as task:
        assert current_task() is task

        @task.tool("run")
        def benchmark(engine: str) -> float:
            return 1.5

        web_search("pgvector hnsw recall", top=2)
        benchmark("qdrant")
    assert current_task() is None
    steps = memory.tasks.tree(task.id, user_id="u1").steps
    assert [step.action for step in steps] == ["search", "run"]
    assert steps[0].input == "web_search('pgvector hnsw recall', top=2)"
    assert steps[0].output is not None and "\x00" not in steps[0].output and "result" in steps[0].output
    assert steps[1].input == "benchmark('qdrant')" and steps[1].output == "1.5"
    assert calls == ["no task open", "pgvector hnsw recall"]


def test_record_step_validates_at_the_edge(memory: Memory) -> None:
    task = memory.tasks.begin("Tidy the release notes", user_id="u1")
    other = memory.tasks.begin("Another task", user_id="u1")
    foreign = memory.tasks.record_step(other.id, "read", "notes.md", user_id="u1")
    with pytest.raises(InvalidInputError, match="lowercase identifier"):
        memory.tasks.record_step(task.id, "Run Tests", "pytest", user_id="u1")
    with pytest.raises(InvalidInputError, match="NUL"):
        memory.tasks.record_step(task.id, "run", "pytest\x00", user_id="u1")
    with pytest.raises(InvalidInputError, match="confidence"):
        memory.tasks.record_step(task.id, "run", "pytest", confidence=2.0, user_id="u1")
    with pytest.raises(NotFoundError, match="same task"):
        memory.tasks.record_step(task.id, "run", "pytest", parent_id=foreign.id, user_id="u1")
    with pytest.raises(NotFoundError):
        memory.tasks.record_step(task.id, "run", "pytest", user_id="someone-else")
    recorder = memory.tasks.start("Through the handle", user_id="u1")
    with pytest.raises(InvalidInputError, match="lowercase identifier"):
        recorder.record("Run Tests", input="pytest")
    with pytest.raises(InvalidInputError, match="input"):
        recorder.step("run", input="   ").__enter__()
    assert memory.tasks.tree(task.id, user_id="u1").steps == ()  # nothing half-written
    assert memory.tasks.tree(recorder.id, user_id="u1").steps == ()
    memory.tasks.finish(task.id, "done", user_id="u1")
    assert memory.tasks.finish(task.id, "done", user_id="u1").status == TaskStatus.SUCCEEDED  # a retry is fine
    with pytest.raises(ConflictError, match="already finished"):
        memory.tasks.finish(task.id, "different", status="failed", user_id="u1")
    with pytest.raises(ConflictError, match="start a new task"):
        memory.tasks.record_step(task.id, "run", "pytest", user_id="u1")
    with pytest.raises(ConflictError, match="start a new task"):  # a hypothesis was still proposed after the end
        memory.tasks.hypothesize(task.id, "the cache is stale", user_id="u1")
    # a recorded step rewritten after the end left the summary saying otherwise (a user trial); a running one may end
    ended = memory.tasks.start("A closed record", user_id="u1")
    done = memory.tasks.record_step(ended.id, "run", "make test", output="green", user_id="u1")
    running = memory.tasks.record_step(ended.id, "run", "make bench", status="running", user_id="u1")
    memory.tasks.finish(ended.id, "done", user_id="u1")
    with pytest.raises(ConflictError, match="can no longer change"):
        memory.tasks.update_step(done.id, output="actually red", status="failed", user_id="u1")
    assert memory.tasks.update_step(running.id, output="1.2 s", status="succeeded", user_id="u1").output == "1.2 s"
    with pytest.raises(InvalidInputError, match="task status"):
        memory.tasks.finish(other.id, status="running", user_id="u1")


def test_recording_defers_embedding_until_the_task_ends(memory: Memory, store: Store) -> None:
    identity = memory.store.embedding_id() or "use-multilingual-v3:512"
    task = memory.tasks.begin("Upgrade the payment SDK", task_type="maintenance", user_id="u1")
    for n in range(3):
        memory.tasks.record_step(task.id, "run", f"upgrade attempt {n}", user_id="u1")
    pending = store.process.unindexed(task.scope, identity, 100)
    assert len(pending) == 4 and {item.kind for item in pending} == {"process_task", STEP_KIND}
    memory.tasks.finish(task.id, "upgraded", user_id="u1")
    assert store.process.unindexed(task.scope, identity, 100) == []
    assert memory.stats(user_id="u1").extra["steps"] == 3


def test_refuting_a_hypothesis_makes_its_proposal_a_dead_end(memory: Memory) -> None:
    with memory.tasks.start("Why did signups drop in March?", task_type="analysis", user_id="u1") as task:
        proposal = task.record("hypothesize", input="the pricing page change scared people off")
        check = task.record("query", input="signups by landing page, Feb vs March", parent_id=proposal.id)
        assert proposal.hypothesis_id is not None
        with pytest.raises(NotFoundError, match="not a step of task"):
            task.refute(proposal.hypothesis_id, "no-such-step")
        refuted = task.refute(proposal.hypothesis_id, check.id)
        assert refuted.status == HypothesisStatus.REFUTED and refuted.evidence == (check.id,)
        extra = task.hypothesize("a tracking script broke", step_id=check.id)
        supported = memory.tasks.resolve_hypothesis(extra.id, "supported", evidence=[check.id], user_id="u1")
        assert supported.status == HypothesisStatus.SUPPORTED
        # what hypothesize() and record() return, not only their ids (the object reached the store raw)
        other = task.hypothesize("ad spend was cut")
        assert task.support(other, check).evidence == (check.id,)
        with pytest.raises(InvalidInputError, match="hypothesis or step"):
            task.support(42)  # type: ignore[arg-type]
        with task.step("read", input="查看部署日志") as read:  # the object `with task.step(...)` gives is evidence
            read.output = "missing DATABASE_URL"
        assert task.support(task.hypothesize("the env var is unset"), read).evidence == (read.id,)
    steps = {step.id: step for step in memory.tasks.tree(task.id, user_id="u1").steps}
    assert steps[proposal.id].dead_end and not steps[check.id].dead_end
    with pytest.raises(InvalidInputError, match="open, supported or refuted"):
        memory.tasks.resolve_hypothesis(extra.id, "maybe", user_id="u1")


def test_artifacts_are_kept_and_indexed(memory: Memory) -> None:
    with memory.tasks.start("Write the quarterly churn analysis", task_type="analysis", user_id="u1") as task:
        with task.step("query", input="churn by cohort") as step:
            step.output = "cohort table"
            table = step.artifact("churn_by_cohort.sql", text="SELECT cohort, churn FROM retention")
        task.artifact("chart", uri="/reports/churn.png", text="流失率按月份的折线图")
        with pytest.raises(InvalidInputError, match="needs text"):
            task.artifact("empty")
    tree = memory.tasks.tree(task.id, user_id="u1")
    assert [a.name for a in tree.artifacts] == ["churn_by_cohort.sql", "chart"] and table.step_id == step.id
    hits = memory.search("流失率折线图", user_id="u1", filters={"kind": [ARTIFACT_KIND]})
    assert hits and hits[0].memory.metadata["artifact_id"] == tree.artifacts[1].id


def test_compression_archives_the_chain_and_restore_brings_it_back(memory: Memory) -> None:
    with memory.tasks.start("清理重复的客户记录", task_type="data", user_id="u1") as task:
        task.record("query", input="按邮箱分组找出重复客户", output="312 组重复")
        task.record("run", input="按最近更新时间合并重复记录", output="合并完成")
        task.finish("合并了 312 组重复客户")
    done = memory.tasks.get(task.id, user_id="u1")
    assert done.compressed and done.summary_source == "extractive"
    assert done.summary is not None and done.summary.startswith("清理重复的客户记录") and "✓ run" in done.summary
    assert "✓ query: 按邮箱分组找出重复客户 → 312 组重复" in done.summary  # what a step found, searchable once archived
    assert memory.search("312 组重复", user_id="u1")[0].id == done.summary_memory_id
    shown = memory.context("清理重复的客户记录，找到多少组重复？", user_id="u1").text
    assert shown.count("清理重复的客户记录") == 1, shown  # the summary stands for the task: shown once
    everything = {"status": ["active", "archived"]}
    units = {m.id: m for m in memory.get_all(user_id="u1", filters=everything)}
    steps = memory.tasks.tree(task.id, user_id="u1").steps
    assert {units[s.memory_id].status for s in steps} == {MemoryStatus.ARCHIVED}
    assert units[done.memory_id].status == MemoryStatus.ACTIVE  # the goal is not the chain
    assert units[done.summary_memory_id or ""].kind == SUMMARY_KIND
    # Compressed, the task is still recalled with its whole path (the records keep every step).
    [first] = memory.tasks.recall("合并重复的客户数据", user_id="u1")
    assert first.task.id == task.id and [s.input for s in first.path] == [s.input for s in steps]

    restored = memory.tasks.restore(task.id, user_id="u1")
    units = {m.id: m for m in memory.get_all(user_id="u1", filters=everything)}
    assert not restored.compressed and {units[s.memory_id].status for s in steps} == {MemoryStatus.ACTIVE}
    assert units[done.summary_memory_id or ""].status == MemoryStatus.ARCHIVED
    again = memory.tasks.compress(task.id, user_id="u1")
    assert again.compressed and again.summary_memory_id == done.summary_memory_id  # the same unit, rewritten
    history = memory.history(steps[0].memory_id, user_id="u1")
    assert [e.action.value for e in history] == ["ADD", "ARCHIVE", "RESTORE", "ARCHIVE"]


def test_finish_without_compression_when_configured_off(store: Store, embedder: object) -> None:
    settings = load_settings({"store": {"path": store.location}, "process": {"compress_on_finish": False}})
    memory = Memory(store, embedder, settings=settings)  # type: ignore[arg-type]
    task = memory.tasks.begin("Rename the billing module", user_id="u1")
    memory.tasks.record_step(task.id, "run", "git mv billing payments", user_id="u1")
    finished = memory.tasks.finish(task.id, "renamed", user_id="u1")
    assert not finished.compressed and finished.summary is None
    with pytest.raises(ConflictError, match="still running"):
        memory.tasks.compress(memory.tasks.begin("x", user_id="u1").id, user_id="u1")


def test_tree_renders_as_text_and_mermaid(memory: Memory) -> None:
    with memory.tasks.start('Fix the "flaky" upload test', task_type="debugging", user_id="u1") as task:
        with (
            task.step("hypothesize", input="a race between two workers") as idea,
            task.step("run", input="run the test 100 times") as run,
        ):
            run.dead_end("passes every time")
        task.record("run", input="pin the fixture's temp dir", output="fixed")
    text = memory.tasks.render(task.id, user_id="u1")
    assert "  ✓ hypothesize: a race between two workers" in text
    assert "    ✗ run: run the test 100 times [dead end]" in text
    mermaid = memory.tasks.render(task.id, "mermaid", user_id="u1")
    assert mermaid.startswith("flowchart TD") and "#quot;flaky#quot;" in mermaid and "s1 --> s2" in mermaid
    assert "class s2 deadend" in mermaid and idea.id
    with pytest.raises(InvalidInputError, match="text or mermaid"):
        memory.tasks.render(task.id, "svg", user_id="u1")  # type: ignore[arg-type]
    assert memory.tasks.resolve_id(task.id[:8], user_id="u1") == task.id


def test_a_step_recorded_as_a_dead_end_failed_unless_it_says_otherwise(memory: Memory) -> None:
    """REST and MCP steps sent with dead_end=true kept status 'succeeded'; step.dead_end() records 'failed'."""
    task = memory.tasks.start("Find the flaky test", user_id="u1")
    dead = memory.tasks.record_step(task.id, "run", "rerun 100 times", dead_end=True, user_id="u1")
    assert (dead.dead_end, dead.status) == (True, StepStatus.FAILED)
    said = memory.tasks.record_step(task.id, "search", "grep sleep(", dead_end=True, status="succeeded", user_id="u1")
    assert said.status == StepStatus.SUCCEEDED  # it ran fine; it just leads nowhere
    running = memory.tasks.record_step(task.id, "run", "bisect the commits", status="running", user_id="u1")
    ended = memory.tasks.update_step(running.id, dead_end=True, user_id="u1")
    assert (ended.status, ended.dead_end) == (StepStatus.FAILED, True) and ended.ended_at is not None
