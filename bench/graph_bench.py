"""Graph memory: LoCoMo recall with and without the graph list (multi-hop is category 1), and what graph
extraction costs per turn, with the offline patterns and with the bundled local model.

LoCoMo turns go through the real write path (``add(infer=True)``, rules extractor + graph patterns, no
model): each speaker's "I" becomes their own node. Both rankings come from the same store, searched with
``graph=True`` and ``graph=False``; a hit's dia_id comes from its episode, or from the turns a fact was
extracted from.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.datasets import Conversation, load_locomo
from bench.embedders import CachedEmbedder
from bench.metrics import mean, recall_at_k
from bench.write_path import batch_results
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import JobStatus

KS = (5, 10, 25)
LLM_TURNS = [
    "王总的太太是李女士，王总喜欢红酒。",
    "前端开发依赖后端 API，张工负责后端 API。",
    "我在字节跳动做后端，住在北京。",
    "My manager is Tom, he prefers short status updates on Fridays.",
    "The checkout service depends on the payments API, and Dana owns the payments API.",
    "I moved to Lisbon last month and I work at Initech now.",
]


def _memory(path: Path, embedder: Any, *, graph: bool, extractor: Any = None, reconciler: Any = None) -> Memory:
    settings = load_settings(
        {"store": {"path": str(path)}, "write": {"background": False, "trigger": "every_n", "every_n": 8},
         "graph": {"enabled": graph}}
    )  # fmt: skip
    return Memory(SQLiteStore(path), embedder, settings=settings, extractor=extractor, reconciler=reconciler)


def _ingest(memory: Memory, conversation: Conversation) -> tuple[dict[str, str], float]:
    """Every turn through add(infer=True); returns message id -> dia_id and the extraction seconds."""
    to_dia: dict[str, str] = {}
    for turn in conversation.turns:
        message = {"role": "user", "content": turn.content, "name": turn.speaker}
        if turn.when is not None:
            message["timestamp"] = turn.when.isoformat()
        added = memory.add([message], user_id=conversation.sample_id, infer=True, metadata={"dia_id": turn.dia_id})
        to_dia.update(dict.fromkeys(added.message_ids, turn.dia_id))
    started = time.perf_counter()
    jobs = memory.flush(user_id=conversation.sample_id)
    assert all(job.status == JobStatus.DONE for job in jobs), [job.error for job in jobs if job.error]
    return to_dia, time.perf_counter() - started


def _ranked(memory: Memory, user: str, question: str, to_dia: dict[str, str], graph: bool) -> list[str]:
    dia_ids: list[str] = []
    for hit in memory.search(question, user_id=user, limit=max(KS), graph=graph, record_access=False):
        found = hit.memory.metadata.get("dia_id")
        candidates = [found] if found else [to_dia[m] for m in hit.memory.provenance.message_ids if m in to_dia]
        dia_ids += [d for d in candidates if d not in dia_ids]
    return dia_ids


def run_locomo_graph(conversations: list[Conversation], embedder: Any, root: Path) -> dict[str, Any]:
    from rich.progress import track

    scores: dict[str, dict[str, list[float]]] = {"graph": {}, "no graph": {}}
    graph_stats: list[dict[str, Any]] = []
    seconds = {"graph": 0.0, "no graph": 0.0}
    turns = 0
    for conversation in track(conversations, description="LoCoMo with/without graph"):
        turns += len(conversation.turns)
        # Extraction cost with the graph step off, on its own store (same turns, same rules extractor).
        with _memory(root / f"{conversation.sample_id}-plain.db", embedder, graph=False) as plain:
            seconds["no graph"] += _ingest(plain, conversation)[1]
        with _memory(root / f"{conversation.sample_id}.db", embedder, graph=True) as memory:
            to_dia, spent = _ingest(memory, conversation)
            seconds["graph"] += spent
            graph_stats.append(memory.stats(user_id=conversation.sample_id).extra)
            for question in conversation.questions:
                for name, graph in (("graph", True), ("no graph", False)):
                    ranked = _ranked(memory, conversation.sample_id, question.question, to_dia, graph)
                    for k in KS:
                        for category in (f"cat{question.category}", "all"):
                            key = f"{category}@{k}"
                            scores[name].setdefault(key, []).append(recall_at_k(question.evidence, ranked, k))
    recall = {name: {key: round(mean(values), 4) for key, values in table.items()} for name, table in scores.items()}
    return {
        "conversations": len(conversations),
        "turns": turns,
        "recall": recall,
        "questions": {key: len(values) for key, values in scores["graph"].items() if key.endswith(f"@{KS[0]}")},
        "graph_size": {
            "entities": sum(s.get("entities", 0) for s in graph_stats),
            "relations": sum(s.get("relations", 0) for s in graph_stats),
            "closed_relations": sum(s.get("closed_relations", 0) for s in graph_stats),
        },
        "write_ms_per_turn": {name: round(1000 * spent / max(turns, 1), 2) for name, spent in seconds.items()},
    }


def run_llm_cost(embedder: Any, root: Path, turns: list[str]) -> dict[str, Any] | None:
    """Model calls, tokens and seconds per turn with the graph in the extraction call and without it."""
    from memstrata.providers.llm_factory import resolve_llm
    from memstrata.write.extract import LLMExtractor
    from memstrata.write.reconcile import LLMReconciler

    resolved = resolve_llm(load_settings().llm, {})
    if resolved.model is None:
        return None
    load = getattr(resolved.model, "load", None)
    if callable(load):
        load()  # loading the weights is not extraction cost: neither row pays for it
    rows = []
    for graph in (False, True):
        extractor = LLMExtractor(resolved.model, graph=graph)
        path = root / f"llm-{graph}.db"
        with _memory(path, embedder, graph=graph, extractor=extractor, reconciler=LLMReconciler(resolved.model)) as m:
            # Prime the runtime's prompt cache with this mode's system prompts (one zh, one en turn), so neither
            # row profits from the other's cached prefix: steady state, as in a long-running service.
            m.add([{"role": "user", "content": "我喜欢喝茶。"}, {"role": "user", "content": "I like tea."}],
                  user_id="warm-up", infer=True, wait=True)  # fmt: skip
            for text in turns:
                m.add([{"role": "user", "content": text}], user_id="u", infer=True)
            started = time.perf_counter()
            jobs = [job for job in m.flush(user_id="u") if job.status == JobStatus.DONE]
            wall = time.perf_counter() - started
            results = batch_results(jobs)
            rows.append({
                "graph": graph,
                "model": extractor.name,
                "turns": len(turns),
                "jobs": len(jobs),
                "model_batches": len(results),
                "model_calls_per_turn": sum(r.get("model_calls", 0) for r in results) / len(turns),
                "prompt_tokens_per_turn": sum(r.get("prompt_tokens", 0) for r in results) / len(turns),
                "completion_tokens_per_turn": sum(r.get("completion_tokens", 0) for r in results) / len(turns),
                "seconds_per_turn": wall / len(turns),
                "triples_from_model": sum(r.get("graph", {}).get("triples_from_model", 0) for r in results),
                "triples_from_rules": sum(r.get("graph", {}).get("triples_from_rules", 0) for r in results),
                "relations": len(m.graph.subgraph(user_id="u").relations),
                "median_job_s": statistics.median([r.get("seconds", 0.0) for r in results]) if results else None,
            })  # fmt: skip
    return {"rows": rows}


def run_graph(quick: bool, with_llm: bool) -> dict[str, Any]:
    conversations = load_locomo()[: 2 if quick else None]
    embedder = CachedEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        result: dict[str, Any] = {"locomo": run_locomo_graph(conversations, embedder, Path(tmp))}
        if with_llm:
            result["llm_cost"] = run_llm_cost(embedder, Path(tmp), LLM_TURNS[:3] if quick else LLM_TURNS)
    return result


def markdown(result: dict[str, Any]) -> str:
    locomo = result["locomo"]
    keys = [f"cat1@{k}" for k in KS] + [f"all@{k}" for k in KS]
    lines = [
        f"### Graph retrieval on LoCoMo ({locomo['conversations']} conversations, {locomo['turns']} turns, "
        f"write path with the rules extractor + graph patterns)",
        "",
        "| ranking | "
        + " | ".join(f"recall {k.replace('cat1', 'multi-hop').replace('all', 'all')}" for k in keys)
        + " |",
        "|---|" + "---|" * len(keys),
    ]
    for name in ("no graph", "graph"):
        lines.append(f"| {name} | " + " | ".join(f"{locomo['recall'][name].get(k, 0):.3f}" for k in keys) + " |")
    size = locomo["graph_size"]
    per_turn = locomo["write_ms_per_turn"]
    lines += [
        "",
        f"- questions: {locomo['questions']}",
        f"- graph: {size['entities']} entities, {size['relations']} relations ({size['closed_relations']} closed)",
        f"- write path ms/turn (rules): graph {per_turn['graph']} vs no graph {per_turn['no graph']}",
    ]
    cost = result.get("llm_cost")
    if cost:
        lines += [
            "",
            f"### Extraction cost per turn with the model ({cost['rows'][0]['model']})",
            "",
            "| graph in the call | turns | model calls/turn (extract + reconcile) | prompt tok/turn "
            "| completion tok/turn | s/turn | triples (model / patterns) | relations |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in cost["rows"]:
            lines.append(
                f"| {'yes' if row['graph'] else 'no'} | {row['turns']} | {row['model_calls_per_turn']:.2f} | "
                f"{row['prompt_tokens_per_turn']:.0f} | {row['completion_tokens_per_turn']:.0f} | "
                f"{row['seconds_per_turn']:.1f} | {row['triples_from_model']} / {row['triples_from_rules']} | "
                f"{row['relations']} |"
            )
        lines += [
            "",
            "prompt tok is what the runtime reports as evaluated; with a prompt cache it is not the prompt's "
            "length (the graph prompt is about 2.2x longer in characters). One sample of a few turns: the model "
            "writes a different number of facts in each row, so completion tokens and seconds differ by more "
            "than the graph's share.",
        ]
    return "\n".join(lines) + "\n"
