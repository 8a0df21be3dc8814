"""kill -9 of a recording agent mid-task loses no recorded step: each step is committed when it begins and
again when it ends, and the units it left without vectors are embedded by the next reader."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from memstrata import Memory
from memstrata.records.process import StepStatus, TaskStatus
from memstrata.storage.protocol import Store

CHILD = textwrap.dedent(
    """
    import sys, time
    from memstrata import Memory
    from memstrata.config import load_settings
    from memstrata.providers.use_embedder import UniversalSentenceEncoder
    from memstrata.storage.factory import open_store
    from memstrata.config import StoreSettings

    location = sys.argv[1]
    memory = Memory(open_store(StoreSettings(path=location)), UniversalSentenceEncoder(),
                    settings=load_settings({"store": {"path": location}}))
    with memory.tasks.start("迁移订单表到新的分区方案", task_type="migration", user_id="u1") as task:
        print("task", task.id, flush=True)
        for n in range(5):
            with task.step("run", input=f"迁移第 {n} 个分区") as step:
                step.output = f"分区 {n} 完成"
            print("done", step.id, flush=True)
        with task.step("run", input="重建全局索引") as step:
            print("inside", step.id, flush=True)
            time.sleep(600)  # killed here, mid-step
    """
)


@pytest.mark.slow
def test_kill_9_mid_task_loses_no_recorded_step(memory: Memory, store: Store) -> None:
    location = str(getattr(store, "url", None) or store.location)  # PostgreSQL's location hides the password
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, location], stdout=subprocess.PIPE, text=True, env=env)
    lines: list[list[str]] = []
    try:
        assert child.stdout is not None
        while not lines or lines[-1][0] != "inside":
            line = child.stdout.readline()
            assert line, "the recording process died early"
            lines.append(line.split())
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    task_id = lines[0][1]
    done = [words[1] for words in lines if words[0] == "done"]
    running = lines[-1][1]

    tree = memory.tasks.tree(task_id, user_id="u1")
    assert tree.task.status == TaskStatus.RUNNING
    assert [step.id for step in tree.steps] == [*done, running]
    assert all(step.status == StepStatus.SUCCEEDED and step.output for step in tree.steps[:5])
    assert tree.steps[5].status == StepStatus.RUNNING and tree.steps[5].input == "重建全局索引"

    # The dead agent embedded nothing; the next reader does, so the steps are found at once.
    [recalled] = memory.tasks.recall("把订单表迁移到新的分区", user_id="u1")
    assert recalled.task.id == task_id and recalled.breakdown.matched in ("goal", "step")
    memory.tasks.update_step(running, status="failed", output="interrupted", user_id="u1")
    finished = memory.tasks.finish(task_id, "5 of 6 partitions migrated", status="failed", user_id="u1")
    assert finished.status == TaskStatus.FAILED
