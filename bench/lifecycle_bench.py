"""Time-sensitive retrieval: questions whose right answer changed over time, with and without
lifecycle ranking and time understanding, side by side on the same store.

Each scenario stores an old and a new version of something about a user (bilingual), at their own
record times (an injected clock), both still active as with infer=False. "Now" questions must rank
the newer version first; "then" questions name a past time ("last year", "去年") and must rank the
older version first.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.protocol import Embedder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.testing import ManualClock

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
LAST_YEAR = datetime(2025, 6, 15, 12, 0, tzinfo=UTC)

# (old fact, new fact, question about now, question about last year)
SCENARIOS = [
    ("I live in Beijing.", "I moved to Shanghai and live there now.", "Where do I live?",
     "Where did I live last year?"),
    ("我在字节跳动做后端开发。", "我现在在阿里巴巴做数据平台。", "我在哪家公司工作？", "我去年在哪家公司工作？"),
    ("I drink coffee every morning.", "I drink green tea every morning.", "What do I drink in the morning?",
     "What did I drink in the mornings last year?"),
    ("我的车是一辆白色的大众高尔夫。", "我的车是一辆蓝色的特斯拉 Model 3。", "我开什么车？", "我去年开什么车？"),
    ("My manager is Tom.", "My manager is Aisha.", "Who is my manager?", "Who was my manager last year?"),
    ("我在学日语。", "我在学西班牙语。", "我在学什么语言？", "我去年在学什么语言？"),
    ("I use a Pixel phone.", "I use an iPhone.", "Which phone do I use?", "Which phone did I use last year?"),
    ("我住在朝阳区的一套两居室。", "我住在海淀区的一套三居室。", "我住在哪个区？", "我去年住在哪个区？"),
    ("I play tennis on weekends.", "I play badminton on weekends.", "What sport do I play on weekends?",
     "What sport did I play on weekends last year?"),
    ("我的健身教练是小李。", "我的健身教练是王教练。", "我的健身教练是谁？", "我去年的健身教练是谁？"),
    ("My favourite editor is Vim.", "My favourite editor is VS Code.", "What is my favourite editor?",
     "What was my favourite editor last year?"),
    ("我每天坐地铁上班。", "我每天骑电动车上班。", "我怎么去上班？", "我去年怎么去上班？"),
]  # fmt: skip

RECIPES = {
    "relevance only": {"lifecycle": False, "understand_time": False},
    "lifecycle ranking": {"lifecycle": True, "understand_time": False},
    "lifecycle + time in query": {"lifecycle": True, "understand_time": True},
}


def _store(root: Path, embedder: Embedder) -> tuple[Memory, list[tuple[str, str, str, str]]]:
    clock = ManualClock(LAST_YEAR)
    path = root / "time.db"
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}), clock=clock)
    ids = []
    for number, (old, new, _, _) in enumerate(SCENARIOS):
        user = f"user-{number}"
        clock.now = LAST_YEAR
        old_id = memory.add(old, user_id=user, event_time=LAST_YEAR).results[0].id
        clock.now = NOW - timedelta(days=20)
        new_id = memory.add(new, user_id=user, event_time=clock.now).results[0].id
        ids.append((user, old_id, new_id, new))
    clock.now = NOW
    return memory, ids


def run_time_sensitive(embedder: Embedder) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        memory, ids = _store(Path(tmp), embedder)
        for name, flags in RECIPES.items():
            now_hits = then_hits = 0
            for (user, old_id, new_id, _), (_, _, ask_now, ask_then) in zip(ids, SCENARIOS, strict=True):
                top_now = memory.search(ask_now, user_id=user, limit=1, record_access=False, **flags)[0].id
                top_then = memory.search(ask_then, user_id=user, limit=1, record_access=False, **flags)[0].id
                now_hits += top_now == new_id
                then_hits += top_then == old_id
            total = len(SCENARIOS)
            results[name] = {
                "current_answer_at_1": now_hits / total,
                "past_answer_at_1": then_hits / total,
                "both_at_1": (now_hits + then_hits) / (2 * total),
            }
        memory.close()
    return {"scenarios": len(SCENARIOS), "recipes": results}


def markdown(result: dict[str, Any]) -> str:
    rows = [
        f"### Time-sensitive questions ({result['scenarios']} bilingual scenarios, answer changed over time)",
        "",
        "| recipe | current answer @1 | past answer @1 (query names the time) | both @1 |",
        "|---|---|---|---|",
    ]
    for name, scores in result["recipes"].items():
        rows.append(
            f"| {name} | {scores['current_answer_at_1']:.3f} | {scores['past_answer_at_1']:.3f} | "
            f"{scores['both_at_1']:.3f} |"
        )
    return "\n".join(rows) + "\n"
