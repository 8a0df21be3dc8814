"""What session summaries add on LoCoMo: one extractive ``summary`` memory per session beside the turns.

``python -m bench.ranking_summaries`` writes every conversation session by session (each turn indexed
with the turn before it, the default unit), then adds each session's summary
(``write/session_summary.py``) through ``Memory.add``. Each question is searched three ways:

- turns only: the default search over the turns;
- with summaries, expanded: a summary hit is replaced by its 2 best source turns
  (``read/expand.best_source_turns``), so the result is still a list of turns;
- session recall@5: the sessions the top 5 hits point at (a turn's session, a summary's session).

Results go to ``bench/results/<date>-ranking-summaries.{json,md}``. Dev data only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import metrics
from bench.datasets import LOCOMO_CATEGORIES, Conversation, load_locomo
from bench.embedders import CachedEmbedder
from bench.ranking_sweep import RESULTS
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.read.expand import best_source_turns
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import Message, Scope, StoredMessage
from memstrata.write.session_summary import SUMMARY_KIND, session_summary

K = 10
EXPANDED_TURNS = 2


def _session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])


def _add(
    memory: Memory, conversation: Conversation, *, summaries: bool
) -> tuple[dict[str, str], dict[str, list[StoredMessage]]]:
    """Turns session by session, each session followed by its summary when asked. Returns memory id ->
    dia id (turns) and summary memory id -> that session's turns (their dia ids as message ids)."""
    doc_of: dict[str, str] = {}
    summarised: dict[str, list[StoredMessage]] = {}
    scope = Scope(user_id=conversation.sample_id)
    sessions: dict[int, list[Any]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.session, []).append(turn)
    for number, turns in sorted(sessions.items()):
        when = turns[0].when.replace(tzinfo=UTC) if turns[0].when else datetime.now(UTC)
        messages = [Message(role="user", content=t.content, name=t.speaker, timestamp=when) for t in turns]
        result = memory.add(messages, user_id=conversation.sample_id)
        doc_of.update({event.id: t.dia_id for event, t in zip(result.results, turns, strict=True)})
        item = session_summary(messages, scope, now=when) if summaries else None
        if item is None:
            continue
        added = memory.add(item.text, user_id=conversation.sample_id, kind=SUMMARY_KIND, metadata={"session": number})
        stored = [StoredMessage(message=m.model_copy(update={"id": t.dia_id}), scope=scope, seq=i)
                  for i, (m, t) in enumerate(zip(messages, turns, strict=True))]  # fmt: skip
        summarised[added.results[0].id] = stored
    return doc_of, summarised


def _ranked(memory: Memory, scope: str, question: str, doc_of: dict[str, str],
            summaries: dict[str, list[StoredMessage]], *, expand: bool) -> list[str]:  # fmt: skip
    hits = memory.search(question, user_id=scope, limit=K, record_access=False)
    docs: list[str] = []
    for hit in hits:
        if hit.id in doc_of:
            docs.append(doc_of[hit.id])
        elif expand and hit.id in summaries:
            docs += [turn.message.id for turn in best_source_turns(summaries[hit.id], question, EXPANDED_TURNS)]
    return list(dict.fromkeys(docs))


def _sessions(memory: Memory, scope: str, question: str, doc_of: dict[str, str],
              summaries: dict[str, list[StoredMessage]], k: int) -> list[int]:  # fmt: skip
    found = []
    for hit in memory.search(question, user_id=scope, limit=k, record_access=False):
        if hit.id in doc_of:
            found.append(_session_of(doc_of[hit.id]))
        elif hit.id in summaries:
            found.append(_session_of(summaries[hit.id][0].message.id))
    return list(dict.fromkeys(found))


def run(conversations: Sequence[Conversation]) -> dict[str, Any]:
    embedder = CachedEmbedder()
    rows: dict[str, list[tuple[int, float]]] = {"turns only": [], "with summaries, expanded": []}
    session_rows: dict[str, list[float]] = {"turns only": [], "with summaries": []}
    with tempfile.TemporaryDirectory() as tmp:
        for conversation in tqdm(conversations, desc="conversations"):
            plain = _memory(Path(tmp) / f"{conversation.sample_id}-turns.db", embedder)
            rich = _memory(Path(tmp) / f"{conversation.sample_id}-summaries.db", embedder)
            plain_docs, _ = _add(plain, conversation, summaries=False)
            rich_docs, summaries = _add(rich, conversation, summaries=True)
            for q in conversation.questions:
                text = q.question.strip()
                evidence_sessions = {_session_of(e) for e in q.evidence}
                for name, memory, docs, expand in (
                    ("turns only", plain, plain_docs, False),
                    ("with summaries, expanded", rich, rich_docs, True),
                ):
                    top = _ranked(memory, q.conversation, text, docs, summaries, expand=expand)
                    rows[name].append((q.category, metrics.recall_at_k(q.evidence, top, K)))
                for name, memory, docs in (("turns only", plain, plain_docs), ("with summaries", rich, rich_docs)):
                    found = _sessions(memory, q.conversation, text, docs, summaries, 5)
                    session_rows[name].append(
                        len(evidence_sessions & set(found)) / len(evidence_sessions) if evidence_sessions else 1.0
                    )
            plain.close()
            rich.close()
    out: dict[str, Any] = {"k": K, "expanded_turns": EXPANDED_TURNS, "turn_recall@10": {}, "session_recall@5": {}}
    for name, scored in rows.items():
        by_category = {
            label: round(statistics.mean([r for c, r in scored if c == number] or [0.0]), 4)
            for number, label in LOCOMO_CATEGORIES.items()
        }
        out["turn_recall@10"][name] = {"overall": round(statistics.mean(r for _, r in scored), 4), **by_category}
    out["session_recall@5"] = {name: round(statistics.mean(v), 4) for name, v in session_rows.items()}
    return out


def _memory(path: Path, embedder: Any) -> Memory:
    return Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))


def markdown(result: dict[str, Any]) -> str:
    labels = list(LOCOMO_CATEGORIES.values())
    lines = [
        "## Session summaries on LoCoMo (dev set)",
        "",
        "One extractive summary memory per session (write/session_summary.py) beside the turns (each indexed",
        f"with the turn before it). A summary hit in the top {K} is replaced by its {EXPANDED_TURNS} best source",
        "turns.",
        "",
        "| search | recall@10 | " + " | ".join(labels) + " |",
        "|---|---|" + "---|" * len(labels),
    ]
    for name, row in result["turn_recall@10"].items():
        lines.append(f"| {name} | {row['overall']:.3f} | " + " | ".join(f"{row[label]:.3f}" for label in labels) + " |")
    lines += ["", "| search | session recall@5 |", "|---|---|"]
    lines += [f"| {name} | {value:.3f} |" for name, value in result["session_recall@5"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ranking_summaries", description=__doc__)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(load_locomo()[: args.conversations])
    stem = args.out / f"{date.today().isoformat()}-ranking-summaries"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(stem.with_suffix(".md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
