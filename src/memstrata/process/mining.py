"""The strategy library: action sequences mined from finished tasks of one type, with their success rates.

For the latest ``strategy_window`` finished tasks of a type:

* a task's *path* is the actions of the steps that worked (``useful_paths``), its *sequence* the actions of
  every step it recorded, consecutive repeats collapsed;
* candidates are the contiguous action runs (2 to ``strategy_max_length`` long) of succeeded tasks' paths;
* a sequence's successes are the succeeded tasks whose path contains it in order (gaps allowed), its
  failures the failed tasks whose sequence contains it: those are its counter-examples;
* confidence = (successes + 1) / (successes + failures + 2), so one lucky task is not a rule;
* a candidate needs ``strategy_min_support`` successes; a shorter sequence is dropped when a longer one
  has exactly the same evidence (it says no more). Stored strategies of the type are always re-scored, so
  evidence that arrives later (a failure) lowers their confidence instead of leaving them stale.

Each strategy keeps a trigger condition (task type, first action, goal words common to the tasks it
worked in), example inputs for its steps, the outcome it led to, and an index unit so it can be found
by context through the read path.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memstrata.lexical import keyword_tokens
from memstrata.process.deps import ProcessDeps
from memstrata.process.recall import unit_relevance
from memstrata.process.units import added, unit
from memstrata.query import Filters, SearchQuery
from memstrata.records.history import history_event
from memstrata.records.process import (
    STRATEGY_KIND,
    CounterExample,
    Step,
    Strategy,
    StrategyStep,
    Task,
    TaskQuery,
    TaskStatus,
)
from memstrata.storage.protocol import WriteBatch
from memstrata.types import HistoryAction, Scope

KEYWORDS = 6
EXAMPLES = 5

Pattern = tuple[str, ...]


Evidence = tuple[list["_Finished"], list["_Finished"]]  # (succeeded tasks, failed tasks)


@dataclass(frozen=True)
class _Finished:
    task: Task
    path: list[Step]
    sequence: tuple[str, ...]

    @property
    def succeeded(self) -> bool:
        return self.task.status == TaskStatus.SUCCEEDED

    @property
    def path_actions(self) -> tuple[str, ...]:
        return _collapsed(step.action for step in self.path)


def _collapsed(actions: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for action in actions:
        if not out or out[-1] != action:
            out.append(action)
    return tuple(out)


def contains(sequence: Sequence[str], pattern: Pattern) -> bool:
    """``pattern`` occurs in ``sequence`` in order, other actions between allowed."""
    remaining = iter(sequence)
    return all(any(action == wanted for action in remaining) for wanted in pattern)


def _candidates(finished: Sequence[_Finished], longest: int) -> set[Pattern]:
    found: set[Pattern] = set()
    for item in finished:
        actions = item.path_actions if item.succeeded else ()
        for size in range(2, min(longest, len(actions)) + 1):
            found.update(actions[start : start + size] for start in range(len(actions) - size + 1))
    return found


def _evidence(finished: Sequence[_Finished], pattern: Pattern) -> Evidence:
    wins = [item for item in finished if item.succeeded and contains(item.path_actions, pattern)]
    losses = [item for item in finished if not item.succeeded and contains(item.sequence, pattern)]
    return wins, losses


def _closed(scored: dict[Pattern, Evidence]) -> dict[Pattern, Evidence]:
    """Drop a pattern when a longer one that contains it has exactly the same evidence."""

    def ids(evidence: Evidence) -> tuple[frozenset[str], frozenset[str]]:
        return frozenset(i.task.id for i in evidence[0]), frozenset(i.task.id for i in evidence[1])

    return {
        pattern: evidence
        for pattern, evidence in scored.items()
        if not any(len(other) > len(pattern) and contains(other, pattern) and ids(evidence) == ids(scored[other])
                   for other in scored)
    }  # fmt: skip


def _examples(win: _Finished, pattern: Pattern) -> tuple[StrategyStep, ...]:
    """Each action of the pattern with the input it had in ``win``'s path (aligned in order)."""
    steps, position = [], 0
    for action in pattern:
        while position < len(win.path) and win.path[position].action != action:
            position += 1
        example = win.path[position].input[:500] if position < len(win.path) else None
        steps.append(StrategyStep(action=action, example=example))
        position += 1
    return tuple(steps)


def _keywords(wins: Sequence[_Finished]) -> list[str]:
    """Goal words shared by at least half (and two) of the tasks the sequence worked in."""
    counts = Counter(token for item in wins for token in set(keyword_tokens(item.task.goal)) if len(token) > 1)
    needed = max(2, (len(wins) + 1) // 2)
    return [token for token, count in counts.most_common() if count >= needed][:KEYWORDS]


def strategy_id(scope: Scope, task_type: str, pattern: Pattern) -> str:
    return hashlib.sha256(f"{scope.label()}|{task_type}|{'>'.join(pattern)}".encode()).hexdigest()[:32]


def strategy_text(
    task_type: str, keywords: Sequence[str], steps: Sequence[StrategyStep], goals: Sequence[str] = ()
) -> str:
    """The unit a context query finds: type and goal words, the goals it worked for, then each step with its example,
    all in their own words. Without the goals, a strategy mined from a Chinese and an English task held only the
    newest task's steps, and neither "降低搜索延迟" nor "search latency too high" found it."""
    head = f"{task_type}: {' '.join(keywords)}".strip()
    worked_for = [f"goal: {goal}" for goal in dict.fromkeys(goals)]
    return "\n".join([head, *worked_for, *(f"{step.action}: {step.example or ''}".strip() for step in steps)])


def _finished_tasks(deps: ProcessDeps, scope: Scope, task_type: str) -> list[_Finished]:
    store = deps.store.process
    query = TaskQuery(scope=scope, statuses=(TaskStatus.SUCCEEDED, TaskStatus.FAILED), task_types=(task_type,),
                      limit=deps.settings.strategy_window)  # fmt: skip
    tasks = store.tasks(query)
    ids = [task.id for task in tasks]
    paths = store.useful_paths(scope, ids)
    steps: dict[str, list[Step]] = {}
    for step in store.steps(scope, task_ids=ids):
        steps.setdefault(step.task_id, []).append(step)
    return [
        _Finished(task, paths.get(task.id, []), _collapsed(step.action for step in steps.get(task.id, [])))
        for task in tasks
    ]


def _strategy(scope: Scope, task_type: str, pattern: Pattern, evidence: Evidence, stored: Strategy | None,
              memory_id: str, now: datetime) -> Strategy:  # fmt: skip
    wins, losses = evidence  # newest first, as the tasks were listed
    keywords = _keywords(wins)
    return Strategy(
        id=strategy_id(scope, task_type, pattern), scope=scope, task_type=task_type,
        trigger={"task_type": task_type, "first_action": pattern[0], "keywords": keywords},
        steps=_examples(wins[0], pattern) if wins else tuple(StrategyStep(action=action) for action in pattern),
        expected_outcome=wins[0].task.outcome if wins else None,
        confidence=round((len(wins) + 1) / (len(wins) + len(losses) + 2), 4),
        support=len(wins) + len(losses), successes=len(wins), failures=len(losses),
        example_task_ids=tuple(item.task.id for item in wins[:EXAMPLES]),
        counter_examples=tuple(CounterExample(task_id=item.task.id, goal=item.task.goal, outcome=item.task.outcome)
                               for item in losses[:EXAMPLES]),
        memory_id=memory_id, created_at=stored.created_at if stored else now, updated_at=now,
    )  # fmt: skip


def mine_strategies(deps: ProcessDeps, scope: Scope, task_type: str) -> list[Strategy]:
    """Re-mine the strategies of ``task_type`` in ``scope`` and store them (with their units, embedded) in one
    write. Returns every strategy of the type, most confident first."""
    settings, now = deps.settings, deps.clock()
    finished = _finished_tasks(deps, scope, task_type)
    stored = {tuple(s.actions): s for s in deps.store.process.strategies(scope, task_types=[task_type], limit=10_000)}
    scored = {pattern: _evidence(finished, pattern) for pattern in _candidates(finished, settings.strategy_max_length)}
    scored = {p: e for p, e in _closed(scored).items() if len(e[0]) >= settings.strategy_min_support}
    ranked = sorted(scored, key=lambda p: ((len(scored[p][0]) + 1) / (len(scored[p][0]) + len(scored[p][1]) + 2),
                                           len(p), len(scored[p][0])), reverse=True)  # fmt: skip
    chosen = {pattern: scored[pattern] for pattern in ranked[: settings.strategies_per_type]}
    for pattern in stored:  # evidence keeps arriving for strategies already in the library
        chosen.setdefault(pattern, _evidence(finished, pattern))
    units = {item.id: item for item in deps.store.get(scope, [s.memory_id for s in stored.values()])}
    strategies, inserts, replacements, history = [], [], [], []
    for pattern, evidence in chosen.items():
        old = stored.get(pattern)
        held = units.get(old.memory_id) if old else None
        strategy = _strategy(scope, task_type, pattern, evidence, old, held.id if held else "", now)
        goals = [item.task.goal[:500] for item in evidence[0][:EXAMPLES]]
        text = strategy_text(task_type, strategy.trigger["keywords"], strategy.steps, goals)
        if held is None:
            fresh = unit(STRATEGY_KIND, scope, text, {"strategy_id": strategy.id, "task_type": task_type}, now,
                         max_chars=deps.max_text_chars)  # fmt: skip
            inserts.append(fresh)
            history.append(added(fresh, now))
            strategy = strategy.model_copy(update={"memory_id": fresh.id})
        elif held.text != text[: deps.max_text_chars]:
            changed = held.model_copy(update={"text": text[: deps.max_text_chars], "updated_at": now})
            replacements.append((changed, held.updated_at))
            history.append(history_event(changed, HistoryAction.UPDATE, at=now, actor="process", old_text=held.text))
        strategies.append(strategy)
    embedded = deps.vector_batch([*inserts, *(item for item, _ in replacements)]) if inserts or replacements else None
    deps.store.write(WriteBatch(
        inserts=inserts, replacements=replacements, history=history, strategies=strategies,
        vectors=embedded.vectors if embedded else (), embedding_id=embedded.embedding_id if embedded else None,
        cache_entries=embedded.cache_entries if embedded else (),
    ))  # fmt: skip
    return sorted(strategies, key=lambda s: (s.confidence, s.support), reverse=True)


def find_strategies(
    deps: ProcessDeps, scope: Scope, context: str | None, task_types: list[str] | None, limit: int, floor: float
) -> list[Strategy]:
    """Strategies at or above ``floor`` confidence: by relevance to ``context`` times confidence (the read path
    over strategy units), or most confident first without a context."""
    store = deps.store.process
    if context is None:
        return [s for s in store.strategies(scope, task_types=task_types, limit=10_000) if s.confidence >= floor][
            :limit
        ]
    query = SearchQuery(scope=scope, text=context, limit=200, filters=Filters(kind=(STRATEGY_KIND,)),
                        now=deps.clock(), lifecycle=False, understand_time=False, graph=False,
                        record_access=False)  # fmt: skip
    relevance: dict[str, float] = {}
    for hit in deps.search(query):
        strategy_id = hit.memory.metadata.get("strategy_id")
        if isinstance(strategy_id, str):
            relevance.setdefault(strategy_id, unit_relevance(hit))
    found = [s for s in store.strategies(scope, ids=list(relevance), task_types=task_types, limit=10_000)
             if s.confidence >= floor]  # fmt: skip
    return sorted(found, key=lambda s: relevance[s.id] * s.confidence, reverse=True)[:limit]
