"""erase_user removes a user's process memory too: tasks, step trees (outputs included, which no index unit
holds), hypotheses, artifacts, strategies and their units; on SQLite not one byte of them is left."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory


def test_erase_user_takes_the_process_records_with_it(memory: Memory) -> None:
    secret_output, secret_artifact = "堆栈里出现了用户的身份证号 110105", "pager rotation for the violet submarine team"
    for attempt in range(2):
        with memory.tasks.start("排查夜间账单任务失败", task_type="ops", user_id="lin") as task:
            with task.step("read", input="账单任务的日志") as step:
                step.output = secret_output
            task.record("hypothesize", input="数据库连接被防火墙切断", dead_end=attempt == 0)
            task.record("run", input="重跑账单任务")
            task.artifact("notes", text=secret_artifact)
            task.finish("重跑后成功")
    with memory.tasks.start("Bob's own task", user_id="bob") as kept:
        kept.record("run", input="bob's step")
    assert memory.tasks.strategies(user_id="lin")

    report = memory.erase_user("lin", confirm=True)

    for table in ("process_tasks", "process_steps", "process_hypotheses", "process_artifacts", "process_strategies"):
        assert report.deleted[table] > 0 and report.remaining[table] == 0, table
    assert report.traces == {} and memory.store.find_traces([secret_output, secret_artifact]) == {}
    assert memory.tasks.list(user_id="lin") == [] and memory.tasks.strategies(user_id="lin") == []
    assert [t.goal for t in memory.tasks.list(user_id="bob")] == ["Bob's own task"]
    if Path(memory.store.location).is_file():  # SQLite: the raw bytes of every file of the database
        raw = b"".join(p.read_bytes() for p in Path(memory.store.location).parent.iterdir() if p.is_file())
        for text in (secret_output, secret_artifact, "排查夜间账单任务失败"):
            assert text.encode() not in raw, text
