"""Process-memory fixtures: the scripted debugging story of issue 17, in English and in Chinese."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from memstrata import Memory
from memstrata.records.process import Task


@dataclass(frozen=True)
class Story:
    """Task 1 tries A (dead end), B (dead end), C (the fix); task 2 is a similar bug."""

    goal: str
    read: tuple[str, str]  # (input, output)
    hypotheses: tuple[str, str, str]  # what A, B and C each test
    attempts: tuple[str, str, str]  # A, B, C
    outcome: str
    distractors: tuple[str, ...]
    new_goal: str
    plan: tuple[tuple[str, str], ...]  # (action, input): A again, B again, C again, in other words


STORIES = {
    "en": Story(
        goal="Login page returns HTTP 500 after the Friday deploy",
        read=("auth-service error logs around the deploy", "NullPointerException in TokenValidator.validate"),
        hypotheses=(
            "stale sessions in the cache after the deploy",
            "the nginx proxy drops the auth header",
            "the deploy changed the JWT signing key id",
        ),
        attempts=(
            "clear the redis session cache",
            "roll back the nginx proxy config change",
            "rotate the JWT signing key and restart auth-service",
        ),
        outcome="fixed: the new build expected another key id; rotating the JWT signing key fixed login",
        distractors=(
            "Monthly sales report CSV export takes ten minutes",
            "Product images fail to upload on Safari",
            "Nightly backup job fills the disk",
        ),
        new_goal="Users get a 500 error when they sign in after yesterday's release",
        plan=(
            ("run", "flush the redis session cache"),
            ("run", "revert the nginx proxy configuration"),
            ("run", "rotate the JWT signing key"),
        ),
    ),
    "zh": Story(
        goal="周五发布后登录页面返回 500 错误",
        read=("查看发布前后认证服务的错误日志", "TokenValidator.validate 抛出空指针异常"),
        hypotheses=("发布后缓存里的会话过期了", "nginx 代理丢掉了认证请求头", "发布改变了 JWT 签名密钥的编号"),
        attempts=("清空 redis 会话缓存", "回滚 nginx 代理配置的改动", "轮换 JWT 签名密钥并重启认证服务"),
        outcome="已修复：新版本需要另一个密钥编号，轮换 JWT 签名密钥后登录恢复正常",
        distractors=("月度销售报表导出 CSV 需要十分钟", "Safari 上商品图片上传失败", "夜间备份任务把磁盘写满"),
        new_goal="昨天上线后用户登录时出现 500 错误",
        plan=(("run", "清除 redis 里的会话缓存"), ("run", "把 nginx 代理配置改回去"), ("run", "轮换 JWT 签名密钥")),
    ),
}


@dataclass(frozen=True)
class Recorded:
    task: Task
    step_ids: dict[str, str]  # "read", "A", "B", "C", "hA", "hB", "hC" -> step id


def record_story(memory: Memory, story: Story, **scope: Any) -> Recorded:
    """Task 1 as an agent records it (hypotheses, nested attempts, refutations), and three unrelated tasks."""
    for number, goal in enumerate(story.distractors):
        with memory.tasks.start(goal, task_type="debugging", **scope) as other:
            other.record("read", input=f"{goal}: profile", output="found the slow part", cost_seconds=30)
            other.record("run", input=f"{goal}: patch number {number}", output="ok", cost_seconds=60)
    ids: dict[str, str] = {}
    with memory.tasks.start(story.goal, task_type="debugging", **scope) as task:
        with task.step("read", input=story.read[0]) as step:
            step.output = story.read[1]
            ids["read"] = step.id
        for name, hypothesis, attempt in zip("ABC", story.hypotheses, story.attempts, strict=True):
            with task.step("hypothesize", input=hypothesis) as proposed:
                ids["h" + name] = proposed.id
                with task.step("run", input=attempt, reasoning=hypothesis) as tried:
                    ids[name] = tried.id
                    if name != "C":
                        tried.output = "still 500"
                        tried.dead_end()
                    else:
                        tried.output = "login works again"
                        tried.confidence = 0.9
            hypothesis_id = memory.tasks.step(ids["h" + name], **scope).hypothesis_id
            assert hypothesis_id is not None
            (task.support if name == "C" else task.refute)(hypothesis_id, ids[name])
        task.finish(story.outcome)
    return Recorded(memory.tasks.get(task.id, **scope), ids)


@pytest.fixture(params=sorted(STORIES))
def story(request: pytest.FixtureRequest) -> Story:
    return STORIES[request.param]
