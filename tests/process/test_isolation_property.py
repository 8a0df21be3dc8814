"""Property: across random tenants and scopes, process memory never crosses a scope: tasks, steps, trees,
recall, plan checks, alternatives and strategies only ever show what the reader's scope contains, and
writes naming a record of another scope are refused. Both backends, the real embedder."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import InvalidInputError, Memory, NotFoundError, Scope
from memstrata.write.pipeline import long_term_scope

IDS = st.one_of(st.none(), st.sampled_from(["a", "b"]))
TENANTS = st.sampled_from([None, "acme"])
SCOPES = (
    st.tuples(IDS, IDS, IDS, TENANTS)
    .filter(lambda ids: any(ids[:3]))
    .map(lambda ids: Scope(user_id=ids[0], agent_id=ids[1], session_id=ids[2], tenant_id=ids[3]))
)
WORDS = st.sampled_from(["重启缓存", "flush the cache", "回滚配置", "roll back config", "read the logs"])
TASKS = st.lists(st.tuples(SCOPES, st.lists(WORDS, min_size=1, max_size=3), st.booleans()), min_size=1, max_size=4)


def _ids(scope: Scope) -> dict[str, str | None]:
    return {"user_id": scope.user_id, "agent_id": scope.agent_id, "session_id": scope.session_id}


def test_process_memory_never_crosses_scopes(memory: Memory) -> None:
    tasks_of: dict[str, Scope] = {}  # every task, step and strategy written, with its scope
    steps_of: dict[str, Scope] = {}
    strategies_of: dict[str, Scope] = {}

    # derandomized: the guard below needs a mined strategy, which a rare random draw did not give (a CI flake)
    @settings(
        max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(tasks=TASKS, reader=SCOPES, query=WORDS)
    def run(tasks: list[tuple[Scope, list[str], bool]], reader: Scope, query: str) -> None:
        for scope, words, works in tasks:
            view = memory.for_tenant(scope.tenant_id)
            with view.tasks.start(f"task about {words[0]}", task_type="ops", **_ids(scope)) as task:
                tasks_of[task.id] = scope
                for n, word in enumerate(["look around", *words]):
                    status = "succeeded" if works else "failed"
                    action = ("read", "run")[min(n, 1)]
                    steps_of[task.record(action, input=word, dead_end=not works, status=status).id] = scope
                task.finish("done" if works else "no luck", status="succeeded" if works else "failed")
            # Strategies are mined into the tasks' long-term scope (the session left out).
            for strategy in view.tasks.strategies(min_confidence=0.0, **_ids(long_term_scope(scope))):
                strategies_of[strategy.id] = strategy.scope

        view, ids = memory.for_tenant(reader.tenant_id), _ids(reader)
        listed = {task.id for task in view.tasks.list(limit=1000, **ids)}
        assert listed == {task_id for task_id, scope in tasks_of.items() if reader.contains(scope)}
        for recalled in view.tasks.recall(query, **ids):
            assert reader.contains(tasks_of[recalled.task.id])
            assert all(reader.contains(steps_of[step.id]) for step in [*recalled.path, *recalled.dead_ends])
        for warning in view.tasks.check_plan(None, [{"action": "run", "input": query}], **ids):
            assert reader.contains(steps_of[warning.dead_end.id]) and reader.contains(tasks_of[warning.task.id])
        mined = view.tasks.strategies(min_confidence=0.0, **ids)
        assert {s.id for s in mined} == {i for i, scope in strategies_of.items() if reader.contains(scope)}
        mine = [step_id for step_id, scope in steps_of.items() if reader.contains(scope)]
        for step_id in mine[:2]:
            for alternative in view.tasks.alternatives(step_id, **ids):
                assert reader.contains(steps_of[alternative.sibling.id])
        foreign = [task_id for task_id, scope in tasks_of.items() if not reader.contains(scope)]
        for task_id in foreign[:3]:
            for attempt in (
                lambda target: view.tasks.get(target, **ids),
                lambda target: view.tasks.record_step(target, "run", "sneak in", **ids),
                lambda target: view.tasks.finish(target, "hijacked", **ids),
            ):
                try:
                    attempt(task_id)
                except (NotFoundError, InvalidInputError):
                    continue
                raise AssertionError(f"{reader} reached task {task_id} of {tasks_of[task_id]}")
        for step_id in [i for i, scope in steps_of.items() if not reader.contains(scope)][:3]:
            try:
                view.tasks.update_step(step_id, dead_end=True, **ids)
            except (NotFoundError, InvalidInputError):
                continue
            raise AssertionError(f"{reader} changed step {step_id} of {steps_of[step_id]}")

    run()
    assert strategies_of and steps_of  # the property was checked on mined strategies too, not vacuously
