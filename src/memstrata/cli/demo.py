"""``memstrata demo``: a short bilingual walkthrough on a real store with the real embedder."""

from __future__ import annotations

import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.panel import Panel
from rich.rule import Rule

from memstrata.cli.render import console, history_table, hits_table, memories_table
from memstrata.config import load_settings
from memstrata.memory import Memory

USER = "lin"
START = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)

# A mixed Chinese/English conversation; each turn is stored verbatim as an episode.
CONVERSATION = [
    ("user", "你好！我叫林晓，在上海做数据工程师。"),
    ("assistant", "Nice to meet you, 林晓. Tell me whenever something is worth remembering."),
    ("user", "I'm migrating our analytics pipeline from Spark to DuckDB this quarter."),
    ("user", "我对花生过敏，团建订餐的时候请提醒我。"),
    ("user", "On weekends I go rock climbing with my sister."),
    ("assistant", "好的，我记住了：订餐避开花生。"),
]

FACTS = [
    ("preference", "Prefers answers in Chinese, with code comments in English."),
    ("fact", "林晓养了一只柯基犬，名字叫豆豆。"),
]

QUERIES = [
    ("中文问题 → 英文记忆", "她周末喜欢什么运动？"),
    ("English question → Chinese memory", "Is Lin allergic to any food?"),
    ("English question → Chinese memory", "Does she have a dog?"),
    ("中文问题 → 英文记忆", "数据管道要迁移到哪个数据库？"),
]


def run_demo(db: Path | None = None) -> None:
    """On ``db``, kept afterwards; without it, on a temporary store that is removed when the demo ends."""
    if db is not None:
        _run(db)
        return
    with tempfile.TemporaryDirectory(prefix="memstrata-demo-") as directory:
        _run(Path(directory) / "demo.db")


def _run(path: Path) -> None:
    settings = load_settings({"store": {"path": str(path)}, "llm": {"provider": "rules"}})
    with Memory.from_config(settings) as memory:
        console.print(Panel.fit(f"memstrata demo · store: {path}", style="bold cyan"))
        _store_conversation(memory)
        _search_both_ways(memory)
        _update_and_delete(memory)


def _store_conversation(memory: Memory) -> None:
    console.print(Rule("1 · store a mixed Chinese/English conversation (raw turns → episodes)"))
    turns = [
        {"role": role, "content": text, "timestamp": START + timedelta(minutes=i)}
        for i, (role, text) in enumerate(CONVERSATION)
    ]
    started = time.perf_counter()
    result = memory.add(turns, user_id=USER, session_id="2026-11-02")
    for kind, text in FACTS:
        memory.add(text, user_id=USER, kind=kind, metadata={"source": "demo"})
    memory.add("DuckDB 1.4", user_id=USER, key="pipeline:engine:analytics")
    elapsed = (time.perf_counter() - started) * 1000
    console.print(f"stored {len(result.message_ids)} raw turns + {len(FACTS) + 1} facts in {elapsed:.0f} ms")
    console.print(memories_table(memory.get_all(user_id=USER), title=f"memories of user {USER}"))


def _search_both_ways(memory: Memory) -> None:
    console.print(Rule("2 · search across languages (hybrid: keyword + multilingual vectors, RRF)"))
    for label, query in QUERIES:
        started = time.perf_counter()
        hits = memory.search(query, user_id=USER, limit=3)
        elapsed = (time.perf_counter() - started) * 1000
        console.print(f"[dim]{label} · {elapsed:.1f} ms[/dim]")
        console.print(hits_table(hits, query))
    console.print("[dim]exact key lookup comes first:[/dim]")
    console.print(
        hits_table(memory.search("pipeline:engine:analytics", user_id=USER, limit=1), "pipeline:engine:analytics")
    )
    console.print("[dim]another user sees nothing of lin's memories:[/dim]")
    console.print(hits_table(memory.search("花生过敏", user_id="someone-else"), "花生过敏 (user someone-else)"))


def _update_and_delete(memory: Memory) -> None:
    console.print(Rule("3 · update, delete, history"))
    engine = memory.add("DuckDB 1.5", user_id=USER, key="pipeline:engine:analytics").results[0]
    console.print(f"key pipeline:engine:analytics → {engine.event}: {engine.previous_memory!r} → {engine.memory!r}")
    dog = memory.search("柯基犬", user_id=USER, limit=1)[0]
    memory.update(dog.id, "林晓养了两只柯基犬：豆豆和花卷。", user_id=USER, reason="user mentioned a second dog")
    memory.delete(dog.id, user_id=USER, reason="demo: user asked to forget the dogs")
    console.print(history_table(memory.history(dog.id, user_id=USER)))
    console.print(history_table(memory.history(engine.id, user_id=USER)))
    remaining = memory.search("What pets does Lin have?", user_id=USER, limit=2)
    console.print(hits_table(remaining, "What pets does Lin have? (after delete)"))
    stats = memory.stats(user_id=USER)
    console.print(
        f"[bold]done[/bold] · memories by status {stats.memories_by_status} · raw turns {stats.messages} · "
        f"history events {stats.history_events}"
    )
