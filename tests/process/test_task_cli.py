"""`memstrata task list|show|tree|strategies` as a user runs them: the CLI over a real store (tests/support/cli.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import memstrata
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from support.cli import run

SOURCE = str(Path(memstrata.__file__).resolve().parents[1])


def _cli(tmp_path: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    result = run(tmp_path, *args, ok=ok)
    assert (result.returncode == 0) == ok, result.stderr
    return result


def _json(tmp_path: Path, *args: str) -> Any:
    return json.loads(_cli(tmp_path, "--json", *args).stdout)


def test_task_commands(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    path = tmp_path / "cli.db"
    with Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}})) as memory:
        for region in ("华东", "华北"):
            with memory.tasks.start(f"{region}机房磁盘告警排查", task_type="ops", user_id="u1") as task:
                task.record("read", input=f"{region}机房的磁盘监控面板", output="日志目录占满")
                with task.step("run", input="清理七天前的日志") as step:
                    step.output = "磁盘降到 40%"
                task.finish("清理旧日志后告警解除")

    listed = _json(tmp_path, "task", "list", "--user", "u1")
    assert [t["goal"] for t in listed] == ["华北机房磁盘告警排查", "华东机房磁盘告警排查"]
    prefix = listed[0]["id"][:8]
    shown = _json(tmp_path, "task", "show", prefix, "--user", "u1")
    assert shown["task"]["id"] == listed[0]["id"] and [s["action"] for s in shown["steps"]] == ["read", "run"]
    text = _cli(tmp_path, "task", "show", prefix, "--user", "u1").stdout
    assert "华北机房磁盘告警排查" in text and "✓ run: 清理七天前的日志" in text
    tree = _cli(tmp_path, "task", "tree", prefix, "--user", "u1").stdout
    assert tree.splitlines()[1:3] == ["→ 清理旧日志后告警解除", "  ✓ read: 华北机房的磁盘监控面板"]
    mermaid = _cli(tmp_path, "task", "tree", prefix, "--mermaid", "--user", "u1").stdout
    assert mermaid.startswith("flowchart TD") and "task --> s1" in mermaid
    [strategy] = _json(tmp_path, "task", "strategies", "--user", "u1", "--type", "ops")
    assert strategy["steps"][0]["action"] == "read" and strategy["successes"] == 2
    table = _cli(tmp_path, "task", "strategies", "--user", "u1", "--context", "机房磁盘满了").stdout
    assert "read → run" in table
    missing = _cli(tmp_path, "task", "show", "ffffffff", "--user", "u1", ok=False)
    assert missing.returncode == 1 and "no task id starts with" in missing.stderr
