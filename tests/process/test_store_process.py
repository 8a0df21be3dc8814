"""Contract of the process tables on both backends: whole-record upserts within a scope, all-or-nothing with
their units, the tree walks in SQL, scope inside every query, erasure, export and stats."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from memstrata import ConflictError
from memstrata.process.units import step_unit, task_unit
from memstrata.records.process import (
    CounterExample,
    Hypothesis,
    HypothesisStatus,
    Step,
    StepStatus,
    Strategy,
    StrategyStep,
    Task,
    TaskQuery,
    TaskStatus,
)
from memstrata.storage.protocol import Store, WriteBatch
from memstrata.types import Scope

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
U1 = Scope(user_id="u1", session_id="s1")
U2 = Scope(user_id="u2")


def _task(scope: Scope, task_id: str, goal: str = "fix the build", **fields: object) -> Task:
    return Task(id=task_id, scope=scope, goal=goal, memory_id=f"unit-{task_id}", started_at=T0, updated_at=T0,
                **fields)  # type: ignore[arg-type]  # fmt: skip


def _step(scope: Scope, task_id: str, step_id: str, parent: str | None = None, *, ok: bool = True,
          dead: bool = False, n: int = 0) -> Step:  # fmt: skip
    status = StepStatus.SUCCEEDED if ok else StepStatus.FAILED
    return Step(id=step_id, task_id=task_id, scope=scope, parent_id=parent, action="run", input=f"try {step_id}",
                status=status, dead_end=dead, memory_id=f"unit-{step_id}", started_at=T0 + timedelta(seconds=n),
                tags={"tool": "make"}, cost_tokens=10, generalisable=None)  # fmt: skip


def _tree(scope: Scope, task_id: str) -> list[Step]:
    """root-level: a (ok) -> a1 (ok) -> a11 (ok); a -> a2 (dead) -> a21 (ok, but under a dead end);
    b (failed) -> b1 (ok, but under a failure); c (ok)."""
    spec = [("a", None, True, False), ("a1", "a", True, False), ("a11", "a1", True, False),
            ("a2", "a", True, True), ("a21", "a2", True, False), ("b", None, False, False),
            ("b1", "b", True, False), ("c", None, True, False)]  # fmt: skip
    return [_step(scope, task_id, f"{task_id}-{name}", f"{task_id}-{parent}" if parent else None, ok=ok, dead=dead,
                  n=n) for n, (name, parent, ok, dead) in enumerate(spec)]  # fmt: skip


def test_records_round_trip_and_are_replaced_whole_within_their_scope(store: Store) -> None:
    task = _task(U1, "t1", context="CI is red", constraints=("no force push",), metadata={"repo": "api"})
    steps = _tree(U1, "t1")
    hypothesis = Hypothesis(id="h1", task_id="t1", scope=U1, text="a flaky test", step_id="t1-a", created_at=T0,
                            updated_at=T0)  # fmt: skip
    store.write(WriteBatch(tasks=[task], steps=steps, hypotheses=[hypothesis]))
    assert store.process.tasks(TaskQuery(scope=U1)) == [task]
    assert store.process.steps(U1, task_ids=["t1"]) == steps
    assert store.process.hypotheses(U1, task_ids=["t1"]) == [hypothesis]

    done = task.model_copy(update={"status": TaskStatus.SUCCEEDED, "outcome": "green", "ended_at": T0 + timedelta(1),
                                   "compressed": True})  # fmt: skip
    refuted = hypothesis.model_copy(update={"status": HypothesisStatus.REFUTED, "evidence": ("t1-b",)})
    store.write(WriteBatch(tasks=[done], hypotheses=[refuted]))
    assert store.process.tasks(TaskQuery(scope=Scope(user_id="u1"), ids=("t1",))) == [done]
    assert store.process.hypotheses(U1, ids=["h1"]) == [refuted]

    # The same id from another scope is refused, and the whole batch with it.
    with pytest.raises(ConflictError, match="another scope"):
        store.write(WriteBatch(tasks=[_task(U2, "t2"), _task(U2, "t1", goal="hijack")]))
    assert store.process.tasks(TaskQuery(scope=U2)) == []
    assert store.process.tasks(TaskQuery(scope=U1, ids=("t1",)))[0].goal == "fix the build"


def test_a_step_and_its_unit_are_written_together_or_not_at_all(store: Store) -> None:
    unit = step_unit(U1, "t1", "s1", "run", "make test", T0, max_chars=1000)
    store.write(WriteBatch(tasks=[_task(U2, "t-other")]))
    clash = _task(U1, "t-other")  # another scope's id: the batch fails
    with pytest.raises(ConflictError):
        store.write(WriteBatch(inserts=[unit], steps=[_step(U1, "t1", "s1")], tasks=[clash]))
    assert store.get(U1, [unit.id]) == [] and store.process.steps(U1, step_ids=["s1"]) == []


def test_useful_paths_walk_the_tree_in_sql(store: Store) -> None:
    store.write(WriteBatch(tasks=[_task(U1, "t1"), _task(U1, "t2"), _task(U2, "t3")],
                           steps=[*_tree(U1, "t1"), *_tree(U1, "t2"), *_tree(U2, "t3")]))  # fmt: skip
    paths = store.process.useful_paths(Scope(user_id="u1"), ["t1", "t2", "t3"])
    assert sorted(paths) == ["t1", "t2"]  # t3 belongs to another user
    assert [s.id for s in paths["t1"]] == ["t1-a", "t1-a1", "t1-a11", "t1-c"]
    assert store.process.useful_paths(U1, []) == {}


def test_succeeded_siblings(store: Store) -> None:
    store.write(WriteBatch(tasks=[_task(U1, "t1")], steps=_tree(U1, "t1")))
    pairs = store.process.succeeded_siblings(U1, ["t1-a2", "t1-b"])
    assert sorted((failed, sibling.id) for failed, sibling in pairs) == [
        ("t1-a2", "t1-a1"), ("t1-b", "t1-a"), ("t1-b", "t1-c"),
    ]  # fmt: skip
    assert store.process.succeeded_siblings(U2, ["t1-a2"]) == []


def test_strategies_and_unindexed_units_and_counts(store: Store) -> None:
    strategy = Strategy(
        id="g1", scope=Scope(user_id="u1"), task_type="debugging", trigger={"keywords": ["登录"]},
        steps=(StrategyStep(action="read", example="日志"), StrategyStep(action="run")), expected_outcome="fixed",
        confidence=0.75, support=2, successes=2, failures=0, counter_examples=(CounterExample(task_id="t9", goal="g"),),
        memory_id="m-g1", created_at=T0, updated_at=T0,
    )  # fmt: skip
    goal = task_unit(U1, "t1", "debugging", "fix the build", T0, max_chars=1000)
    store.write(WriteBatch(inserts=[goal], tasks=[_task(U1, "t1")], steps=_tree(U1, "t1"), strategies=[strategy]))
    assert store.process.strategies(U1) == []  # a session scope does not see the user's long-term strategies
    assert store.process.strategies(Scope(user_id="u1"), task_types=["debugging"]) == [strategy]
    assert store.process.strategies(Scope(user_id="u1"), task_types=[]) == []
    assert [item.id for item in store.process.unindexed(U1, "use:512", 10)] == [goal.id]
    assert store.process.counts(Scope(user_id="u1")) == {"tasks": 1, "steps": 8, "hypotheses": 0, "artifacts": 0,
                                                          "strategies": 1}  # fmt: skip
    assert store.stats(Scope(user_id="u1")).extra["steps"] == 8


def test_erasure_export_and_merge(store_factory: Callable[[str], Store]) -> None:
    store = store_factory("a")
    store.write(WriteBatch(tasks=[_task(U1, "t1"), _task(U2, "t2")], steps=[*_tree(U1, "t1"), *_tree(U2, "t2")]))
    exported = [(kind, record) for kind, record in store.export_all() if kind.startswith("task")]
    assert sorted({kind for kind, _ in exported}) == ["task", "task_step"] and len(exported) == 18

    # Merging (an import): identical rows are skipped, a row stored with other content is a conflict.
    tasks = [r for k, r in exported if k == "task"]
    steps = [r for k, r in exported if k == "task_step"]
    copy = store_factory("b")
    copy.write(WriteBatch(tasks=tasks[:1], steps=steps[:3]))
    copy.write(WriteBatch(tasks=tasks, steps=steps, skip_identical=True))  # type: ignore[arg-type]
    assert len(copy.process.steps(Scope(user_id="u2"), task_ids=["t2"])) == 8
    assert copy.process.counts(None) == store.process.counts(None)
    changed = tasks[0].model_copy(update={"goal": "changed since the export"})  # type: ignore[union-attr]
    with pytest.raises(ConflictError, match="other content"):
        copy.write(WriteBatch(tasks=[changed], skip_identical=True))

    deleted = store.erase_scope(Scope(user_id="u1"))
    assert deleted["process_tasks"] == 1 and deleted["process_steps"] == 8
    remaining = store.count_scope_rows(Scope(user_id="u1"))
    assert remaining["process_tasks"] == remaining["process_steps"] == 0
    assert store.process.counts(None)["steps"] == 8  # the other user's tree is untouched
