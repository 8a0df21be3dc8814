"""The labelled write-path decision set (tests/data/write_decisions.json): load it, run a scenario through a
Memory, check what ended up stored. Shared by the fast suite (scripted model at the HTTP boundary), the slow
test and ``bench/write_decisions.py`` (the bundled model).

A scenario is a few steps; each step's turns go in with one ``add(infer=True, wait=True)`` at the step's time
(turn timestamps from the data, so valid time is tested, not the processing time). Expectations are
case-insensitive regular expressions over the user's memories (episodes excluded):

- ``active``: each matches some active (or pending) memory;
- ``closed``: each matches some superseded or deleted memory;
- ``not_active``: none matches an active memory;
- ``kept``: unrelated facts that must stay active and never be closed (closing one is counted as damage);
- ``count``: exactly n active memories match;
- ``event_time`` / ``valid_from``: the date of the matching active memory;
- ``as_of``: ``search(query, as_of=at)`` shows a memory matching ``present`` and none matching ``absent``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memstrata import Memory
from memstrata.testing import ManualClock
from memstrata.types import JobStatus, MemoryItem, MemoryStatus

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "write_decisions.json"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Turn(_Model):
    role: Literal["user", "assistant"]
    content: str
    facts: list[str] = Field(default_factory=list)  # what an ideal extractor returns for this turn
    at: datetime | None = None


class Step(_Model):
    day: float | None = None
    at: datetime | None = None
    turns: list[Turn]


class Seed(_Model):
    text: str
    day: float = -30


class DatedMatch(_Model):
    match: str
    date: str


class AsOf(_Model):
    """Time travel: at ``at`` (valid time) the search answers with ``present`` and shows nothing matching
    ``absent`` (the state before or after). Ranking among the valid memories is not what is tested."""

    at: datetime
    query: str
    present: str
    absent: str


class Expect(_Model):
    active: list[str] = Field(default_factory=list)
    closed: list[str] = Field(default_factory=list)
    not_active: list[str] = Field(default_factory=list)
    kept: list[str] = Field(default_factory=list)
    count: dict[str, int] = Field(default_factory=dict)
    event_time: list[DatedMatch] = Field(default_factory=list)
    valid_from: list[DatedMatch] = Field(default_factory=list)
    as_of: list[AsOf] = Field(default_factory=list)


class Scenario(_Model):
    id: str
    class_: str = Field(alias="class")
    lang: str
    seed: list[Seed] = Field(default_factory=list)
    steps: list[Step]
    judge: dict[str, Literal["same", "refines", "contradicts", "unrelated"]] = Field(default_factory=dict)
    expect: Expect


class DecisionSet(_Model):
    base: datetime
    about: str
    scenarios: list[Scenario]


def load_decision_set(path: Path = DATA) -> DecisionSet:
    return DecisionSet.model_validate(json.loads(path.read_text(encoding="utf-8")))


@dataclass
class Outcome:
    id: str
    class_: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    damaged: int = 0  # "kept" facts that were closed: unrelated facts deleted or overwritten
    failed_jobs: int = 0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds_per_step: list[float] = field(default_factory=list)
    rejected: int = 0  # model proposals the engine refused
    memories: dict[str, list[str]] = field(default_factory=dict)  # status -> texts, for reading failures


def _moment(base: datetime, step: Step) -> datetime:
    return step.at or base + timedelta(days=step.day or 0)


def run_scenario(memory: Memory, clock: ManualClock, data: DecisionSet, scenario: Scenario, user_id: str) -> Outcome:
    """Seed, play every step with infer=True, and check the expectations. ``clock`` is the Memory's clock:
    record time moves forward monotonically, valid time comes from the turns."""
    outcome = Outcome(scenario.id, scenario.class_, passed=False)
    clock.now = max(clock.now, data.base - timedelta(days=60))
    for seed in scenario.seed:  # stored facts from before the conversation, valid from their own day
        when = data.base + timedelta(days=seed.day)
        clock.now = max(clock.now, when)
        memory.add(seed.text, user_id=user_id, event_time=when)
    for step in scenario.steps:
        said = _moment(data.base, step)
        clock.now = max(clock.now, said) + timedelta(minutes=1)
        turns = [
            {"role": turn.role, "content": turn.content, "timestamp": turn.at or said + timedelta(seconds=i)}
            for i, turn in enumerate(step.turns)
        ]
        started = time.perf_counter()
        result = memory.add(turns, user_id=user_id, infer=True, wait=True)
        outcome.seconds_per_step.append(time.perf_counter() - started)
        for job in memory.list_jobs(user_id=user_id, limit=1000):
            if job.id != result.job_id:
                continue
            if job.status != JobStatus.DONE:
                outcome.failed_jobs += 1
                outcome.failures.append(f"job {job.status.value}: {job.error}")
            outcome.model_calls += int(job.result.get("model_calls", 0))
            outcome.prompt_tokens += int(job.result.get("prompt_tokens", 0))
            outcome.completion_tokens += int(job.result.get("completion_tokens", 0))
            outcome.rejected += len(job.result.get("rejected", []))
    _check(memory, scenario, user_id, outcome)
    outcome.passed = not outcome.failures
    return outcome


def _memories(memory: Memory, user_id: str) -> list[MemoryItem]:
    statuses = [MemoryStatus.ACTIVE, MemoryStatus.PENDING, MemoryStatus.SUPERSEDED, MemoryStatus.DELETED]
    return memory.get_all(user_id=user_id, filters={"exclude_kind": ["episode"], "status": statuses}, limit=1000)


def _check(memory: Memory, scenario: Scenario, user_id: str, outcome: Outcome) -> None:
    items = _memories(memory, user_id)
    live = [m for m in items if m.status in (MemoryStatus.ACTIVE, MemoryStatus.PENDING)]
    closed = [m for m in items if m.status in (MemoryStatus.SUPERSEDED, MemoryStatus.DELETED)]
    outcome.memories = {"active": [m.text for m in live], "closed": [m.text for m in closed]}
    expect = scenario.expect

    def fail_if(bad: bool, why: str) -> None:
        if bad:
            outcome.failures.append(why)

    def matching(pattern: str, pool: list[MemoryItem]) -> list[MemoryItem]:
        return [m for m in pool if re.search(pattern, m.text, re.I)]

    for pattern in expect.active:
        fail_if(not matching(pattern, live), f"no active memory matches {pattern!r}")
    for pattern in expect.closed:
        fail_if(not matching(pattern, closed), f"no closed memory matches {pattern!r}")
    for pattern in expect.not_active:
        fail_if(bool(matching(pattern, live)), f"an active memory still matches {pattern!r}")
    for pattern in expect.kept:
        damaged = matching(pattern, closed)
        outcome.damaged += len(damaged)
        fail_if(bool(damaged), f"unrelated memory closed: {[m.text for m in damaged]}")
        fail_if(not matching(pattern, live), f"unrelated memory {pattern!r} is not active")
    for pattern, wanted in expect.count.items():
        found = len(matching(pattern, live))
        fail_if(found != wanted, f"{found} active memories match {pattern!r}, expected {wanted}")
    dated = [(d, "event_time") for d in expect.event_time] + [(d, "valid_from") for d in expect.valid_from]
    for check, attribute in dated:
        dates = {str(getattr(m, attribute).date()) for m in matching(check.match, live) if getattr(m, attribute)}
        fail_if(check.date not in dates, f"{attribute} of {check.match!r} is {sorted(dates)}, expected {check.date}")
    for question in expect.as_of:
        hits = memory.search(question.query, user_id=user_id, as_of=question.at, filters={"exclude_kind": ["episode"]})
        texts = [hit.text for hit in hits]
        when, present, absent = question.at.date(), question.present, question.absent
        fail_if(not any(re.search(present, t, re.I) for t in texts), f"as_of {when}: nothing matches {present!r}")
        fail_if(any(re.search(absent, t, re.I) for t in texts), f"as_of {when}: {absent!r} in {texts}")


# --- the scripted model: an ideal extractor and judge, answering from the scenario's labels ---------------

_TURN_LINE = re.compile(r"^\[(\d+)\] (user|assistant)(?: \([^)]*\))?: (.*)$")
_PAIR = re.compile(r"^OLD: (.*)\nNEW: (.*)$")
_VERDICT = {"same": "same", "refines": "compatible", "contradicts": "conflict", "unrelated": "compatible"}


def scripted_answer(request: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """What an ideal model answers to one request of the write path, from the scenario's labels. Extraction:
    each rendered turn's labelled facts. Judging: the labelled relation of each pair, else "unrelated"."""
    prompt = request["messages"][-1]["content"]
    pair = _PAIR.match(prompt)
    if pair:
        return {"answer": _VERDICT[scenario.judge.get(f"{pair[2]} | {pair[1]}", "unrelated")]}
    facts_by_turn = {turn.content: turn.facts for step in scenario.steps for turn in step.turns}
    facts = []
    for line in prompt.splitlines():
        match = _TURN_LINE.match(line)
        if match:
            facts += [{"turn": int(match[1]), "text": text} for text in facts_by_turn.get(match[3], [])]
    return {"facts": facts, "relations": []}


def summarise(outcomes: list[Outcome]) -> dict[str, Any]:
    by_class: dict[str, dict[str, Any]] = {}
    for outcome in outcomes:
        row = by_class.setdefault(outcome.class_, {"scenarios": 0, "passed": 0, "damaged": 0})
        row["scenarios"] += 1
        row["passed"] += outcome.passed
        row["damaged"] += outcome.damaged
    for row in by_class.values():
        row["pass_rate"] = round(row["passed"] / row["scenarios"], 3)
    total = len(outcomes)
    passed = sum(o.passed for o in outcomes)
    return {
        "scenarios": total,
        "passed": passed,
        "pass_rate": round(passed / total, 3) if total else None,
        "unrelated_closed": sum(o.damaged for o in outcomes),
        "failed_jobs": sum(o.failed_jobs for o in outcomes),
        "rejected_proposals": sum(o.rejected for o in outcomes),
        "by_class": dict(sorted(by_class.items())),
    }
