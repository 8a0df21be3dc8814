"""Retrieval quality: LoCoMo, MADial-Bench (zh, en) and LongMemEval-format files.

Every system sees the same documents in the same scopes and answers the same queries in the same
run. Each conversation (LoCoMo), user (MADial) or question (LongMemEval) is its own scope.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import metrics
from bench.baselines.bm25 import BM25, WhitespaceBM25
from bench.baselines.dense import Dense
from bench.datasets import (
    EVIDENCE_NORMALISATION,
    LOCOMO_CATEGORIES,
    Conversation,
    LmeInstance,
    MadialSet,
)
from bench.systems import (
    MEMSTRATA_RECIPES,
    Doc,
    MemstrataPart,
    MemstrataRecipe,
    Retriever,
    memstrata_retrievers,
)

Scorer = Callable[[Sequence[str], Sequence[str], int], float]


def build_systems(
    embedder: Any,
    workdir: Path,
    *,
    recipes: Sequence[MemstrataRecipe] = MEMSTRATA_RECIPES,
    with_llm: bool = False,
    reference_bm25: bool = False,
    parts: bool = True,
    extra_settings: dict[str, Any] | None = None,
) -> tuple[list[Retriever], dict[str, str]]:
    systems: list[Retriever] = [WhitespaceBM25()] if reference_bm25 else []
    systems += [BM25(), Dense(embedder)]
    memstrata, skipped = memstrata_retrievers(
        recipes, embedder, workdir, with_llm=with_llm, extra_settings=extra_settings
    )
    systems += memstrata
    if parts and memstrata:
        cache: dict[tuple[str, str, int], Any] = {}
        systems += [MemstrataPart(memstrata[0], part, cache) for part in ("keyword", "dense")]
    return systems, skipped


def _index_all(systems: Sequence[Retriever], scoped: dict[str, list[Doc]], progress: bool) -> dict[str, float]:
    seconds = {}
    for system in systems:
        began = time.perf_counter()
        for scope, docs in tqdm(scoped.items(), desc=f"index {system.name}", disable=not progress, leave=False):
            system.index(scope, docs)
        seconds[system.name] = round(time.perf_counter() - began, 2)
    return seconds


def _rank_all(
    systems: Sequence[Retriever], queries: Sequence[tuple[str, str]], k: int, progress: bool
) -> tuple[dict[str, list[list[str]]], dict[str, float]]:
    ranked: dict[str, list[list[str]]] = {}
    latency: dict[str, float] = {}
    queries = [(scope, query.strip()) for scope, query in queries]  # memstrata trims; give everyone the same text
    for system in systems:  # embed the queries once, outside the timing (the embedder caches them)
        embedder = getattr(system, "embedder", None)
        if embedder is not None:
            embedder.embed_batch(list(dict.fromkeys(query for _, query in queries)))
    for system in systems:
        began = time.perf_counter()
        ranked[system.name] = [
            system.search(scope, query, k)
            for scope, query in tqdm(queries, desc=f"search {system.name}", disable=not progress, leave=False)
        ]
        latency[system.name] = round(1000 * (time.perf_counter() - began) / max(1, len(queries)), 2)
    return ranked, latency


def _summarise(rows: list[dict[str, float]]) -> dict[str, float]:
    return {name: round(metrics.mean([row[name] for row in rows]), 4) for name in rows[0]} if rows else {}


# --- LoCoMo -------------------------------------------------------------------------------
def locomo_docs(conversation: Conversation) -> list[Doc]:
    return [
        Doc(t.dia_id, t.indexed, t.content, speaker=t.speaker, when=t.when, official=t.official)
        for t in conversation.turns
    ]


def run_locomo(
    conversations: Sequence[Conversation],
    systems: Sequence[Retriever],
    *,
    max_questions: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    scoped = {c.sample_id: locomo_docs(c) for c in conversations}
    questions = [q for c in conversations for q in c.questions][:max_questions]
    index_seconds = _index_all(systems, scoped, progress)
    k_max = max(metrics.LOCOMO_KS)
    ranked, latency = _rank_all(systems, [(q.conversation, q.question) for q in questions], k_max, progress)
    results: dict[str, Any] = {}
    details = []
    for system in systems:
        rows = []
        for q, top in zip(questions, ranked[system.name], strict=True):
            row = {"category": float(q.category)}
            for k in metrics.LOCOMO_KS:
                row[f"recall@{k}"] = metrics.recall_at_k(q.evidence, top, k)
                row[f"hit_any@{k}"] = metrics.hit_any_at_k(q.evidence, top, k)
                row[f"ndcg@{k}"] = metrics.ndcg_at_k(q.evidence, top, k)
            rows.append(row)
        by_category = {}
        for number, label in LOCOMO_CATEGORIES.items():
            chosen = [r for r in rows if r["category"] == number]
            summary = _summarise(chosen)
            summary.pop("category", None)
            by_category[str(number)] = {"name": label, "n": len(chosen), **summary}
        overall = _summarise(rows)
        overall.pop("category", None)
        results[system.name] = {
            "overall": {"n": len(rows), **overall},
            "by_category": by_category,
            "index_seconds": index_seconds[system.name],
            "search_ms_mean": latency[system.name],
        }
    for i, q in enumerate(questions):
        details.append(
            {
                "conversation": q.conversation,
                "index": q.index,
                "category": q.category,
                "question": q.question,
                "answer": q.answer,
                "evidence": list(q.evidence),
                "top10": {name: ranked[name][i][:10] for name in ranked},
            }
        )
    return {
        "dataset": "locomo10",
        "questions": len(questions),
        "conversations": len(conversations),
        "turns": sum(len(docs) for docs in scoped.values()),
        "evidence_normalisation": EVIDENCE_NORMALISATION,
        "memory_unit": "one memory per turn: speaker (message name), text + ' [shared image: caption]', "
        "session date as message timestamp, dia_id in metadata; baselines index 'speaker: content'",
        "systems": results,
        "details": details,
    }


# --- MADial-Bench -------------------------------------------------------------------------
def run_madial(data: MadialSet, systems: Sequence[Retriever], *, progress: bool = True) -> dict[str, Any]:
    scoped: dict[str, list[Doc]] = {}
    for memory in data.memories:
        scoped.setdefault(memory.user_id, []).append(Doc(memory.memory_id, memory.text, memory.text))
    index_seconds = _index_all(systems, scoped, progress)
    k_max = max(metrics.MADIAL_KS)
    ranked, latency = _rank_all(systems, [(q.user_id, q.query) for q in data.queries], k_max, progress)
    results = {}
    for system in systems:
        rows = []
        for q, top in zip(data.queries, ranked[system.name], strict=True):
            row = {}
            for k in metrics.MADIAL_KS:
                row[f"recall@{k}"] = metrics.recall_at_k(q.relevant, top, k)
                row[f"ndcg@{k}"] = metrics.ndcg_at_k(q.relevant, top, k)
                row[f"ndcg_madial@{k}"] = metrics.ndcg_madial(q.relevant, top, k)
            rows.append(row)
        results[system.name] = {
            "overall": {"n": len(rows), **_summarise(rows)},
            "index_seconds": index_seconds[system.name],
            "search_ms_mean": latency[system.name],
        }
    return {
        "dataset": f"madial-{data.language}",
        "queries": len(data.queries),
        "memories": len(data.memories),
        "query": "the dialogue before the first test turn, joined (as the official scripts)",
        "memory_unit": "'[scene / emotion] event', one memory per id, one scope per user",
        "systems": results,
    }


# --- LongMemEval format -------------------------------------------------------------------
def _lme_granularity(
    instances: Sequence[LmeInstance], systems: Sequence[Retriever], granularity: str, progress: bool
) -> dict[str, Any]:
    def docs_of(inst: LmeInstance) -> list[Doc]:
        units = inst.sessions if granularity == "session" else inst.turns
        return [Doc(u.doc_id, u.text, u.text) for u in units]

    scoped = {inst.question_id: docs_of(inst) for inst in instances}
    index_seconds = _index_all(systems, scoped, progress)
    k = min(1000, max(len(d) for d in scoped.values()))
    ranked, latency = _rank_all(systems, [(i.question_id, i.question) for i in instances], k, progress)
    results = {}
    for system in systems:
        session_rows, turn_rows = [], []
        for inst, top in zip(instances, ranked[system.name], strict=True):
            corpus_ids = [d.doc_id for d in scoped[inst.question_id]]
            position = {doc_id: i for i, doc_id in enumerate(corpus_ids)}
            ranking = [position[doc_id] for doc_id in top if doc_id in position]
            srow: dict[str, float] = {}
            trow: dict[str, float] = {}
            for kk in metrics.LME_KS:
                if granularity == "session":
                    srow.update(metrics.lme_evaluate(ranking, inst.gold_sessions, corpus_ids, kk))
                else:
                    trow.update(metrics.lme_evaluate(ranking, inst.gold_turns, corpus_ids, kk))
                    srow.update(metrics.lme_turn_to_session(ranking, inst.gold_turns, corpus_ids, kk))
            session_rows.append(srow)
            if trow:
                turn_rows.append(trow)
        results[system.name] = {
            "session": _summarise(session_rows),
            **({"turn": _summarise(turn_rows)} if turn_rows else {}),
            "index_seconds": index_seconds[system.name],
            "search_ms_mean": latency[system.name],
        }
    return results


def run_longmemeval(
    instances: Sequence[LmeInstance],
    make_systems: Callable[[Path], list[Retriever]],
    *,
    dropped: int,
    progress: bool = True,
) -> dict[str, Any]:
    """Session granularity (one doc per session) and turn granularity (one doc per user turn,
    scored at turn level and, through LongMemEval's turn2session, at session level)."""
    out: dict[str, Any] = {"dataset": "longmemeval-format", "questions": len(instances), "abstention_dropped": dropped}
    for granularity in ("session", "turn"):
        with tempfile.TemporaryDirectory() as tmp:
            systems = make_systems(Path(tmp))
            out[f"{granularity}_granularity"] = _lme_granularity(instances, systems, granularity, progress)
            for system in systems:
                close = getattr(system, "close", None)
                if close:
                    close()
    return out
