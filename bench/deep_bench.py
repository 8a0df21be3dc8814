"""Deep retrieval on the dev sets: fast vs deep, each expansion alone, and context() under a budget.

``python -m bench.deep_bench [--model local|none] [--per-category 8] [--madial 10] [--stride 4]``

Two question sets, fixed and stated in the results (fast and deep always answer the same questions):

- **offline set**: every ``--stride``-th LoCoMo question (dataset order) and every MADial dialogue. Deep
  mode runs with no model at all (its offline heuristics), so the whole pipeline is measured cheaply.
- **model set**: ``--per-category`` LoCoMo questions per category and ``--madial`` dialogues per language,
  evenly spaced in dataset order. Deep mode runs with the bundled local model (Qwen2.5-1.5B, 2 shared CPU
  cores). Its answers are recorded in ``bench/.cache/deep-model-answers.jsonl`` keyed by the prompt, so each
  expansion alone reuses the answers of the full run and a rerun costs no model time; the cost columns
  always report the tokens and seconds measured when an answer was first computed.

Recall@10 as in bench/quality.py (LoCoMo evidence turns; MADial relevant memories). Context: for LoCoMo
questions, ``memory.context(question, budget_tokens=2000, limit=30)``: its tokens (the project's estimator)
and the share of evidence turns cited in it. Results: ``bench/results/<date>-deep.{json,md}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import metrics
from bench.datasets import LOCOMO_CATEGORIES, load_locomo, load_madial
from bench.embedders import CACHE_DIR, CachedEmbedder
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.errors import ProviderError
from memstrata.providers.llm import ChatMessage, ChatModel, M, StructuredResult, Usage
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import Message

RESULTS = Path(__file__).resolve().parent / "results"
K = 10
CONTEXT_BUDGET = 2000
CONTEXT_LIMIT = 30


@dataclass(frozen=True)
class Config:
    name: str
    mode: str
    deep: dict[str, Any] = field(default_factory=dict)
    rerank: dict[str, Any] = field(default_factory=dict)


OFF = {"multi_query": False, "hyde": False, "step_back": False, "evaluate": False}
CONFIGS = [
    Config("fast", "fast"),
    Config("deep (default: understand, multi-query, HyDE, evaluator)", "deep"),
    Config("understand only", "deep", OFF),
    Config("understand + evaluator", "deep", {**OFF, "evaluate": True}),
    Config("understand + multi-query", "deep", {**OFF, "multi_query": True}),
    Config("understand + HyDE", "deep", {**OFF, "hyde": True}),
    Config("understand + step-back", "deep", {**OFF, "step_back": True}),
    Config("deep + step-back", "deep", {"step_back": True}),
]
RERANK = Config("deep + LLM rerank (listwise, top 8)", "deep", {}, {"provider": "llm"})


class RecordedChat:
    """A chat model behind a disk record of its answers, keyed by model, prompt, reply type and max_tokens.
    A recorded answer replays its original usage and latency; a recorded failure raises again."""

    def __init__(self, inner: ChatModel, path: Path) -> None:
        self.inner = inner
        self.path = path
        self._lock = threading.Lock()
        self.spent = 0.0  # seconds really spent in this object (replays are fast; their latency_s is the original)
        self.answers: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                self.answers[record["key"]] = record

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete_structured(
        self,
        messages: Sequence[ChatMessage],
        response_model: type[M],
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> StructuredResult[M]:
        blob = json.dumps(
            [
                self.model_id,
                [(m.role, m.content) for m in messages],
                response_model.__name__,
                response_model.model_json_schema(),
                max_tokens,
            ],
            ensure_ascii=False,
        )
        key = hashlib.sha256(blob.encode()).hexdigest()
        started = time.perf_counter()
        try:
            return self._answer(key, messages, response_model, max_tokens)
        finally:
            self.spent += time.perf_counter() - started

    def _answer(
        self, key: str, messages: Sequence[ChatMessage], response_model: type[M], max_tokens: int
    ) -> StructuredResult[M]:
        record = self.answers.get(key)
        if record is None:
            try:
                result = self.inner.complete_structured(messages, response_model, max_tokens=max_tokens)
                record = {
                    "key": key,
                    "data": result.data.model_dump(mode="json"),
                    "raw": result.raw,
                    "usage": [result.usage.prompt_tokens, result.usage.completion_tokens],
                    "attempts": result.attempts,
                    "latency_s": result.latency_s,
                }
            except ProviderError as exc:
                record = {"key": key, "error": f"{type(exc).__name__}: {exc}"}
            with self._lock, self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            self.answers[key] = record
        if "error" in record:
            raise ProviderError(f"(recorded) {record['error']}")
        return StructuredResult(
            data=response_model.model_validate(record["data"]),
            raw=record["raw"],
            usage=Usage(*record["usage"]),
            attempts=record["attempts"],
            model_id=self.model_id,
            latency_s=record["latency_s"],
        )


# --- stores -------------------------------------------------------------------------------------
def locomo_store(embedder: CachedEmbedder) -> tuple[Path, dict[str, str]]:
    """Every LoCoMo conversation, session by session (one scope each); memory id -> dia id."""
    path = CACHE_DIR / "deep-locomo.db"
    mapping = CACHE_DIR / "deep-locomo-docs.json"
    if path.exists() and mapping.exists():
        return path, json.loads(mapping.read_text())
    path.unlink(missing_ok=True)
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))
    doc_of: dict[str, str] = {}
    for conversation in tqdm(load_locomo(), desc="ingest locomo"):
        sessions: dict[int, list[Any]] = {}
        for turn in conversation.turns:
            sessions.setdefault(turn.session, []).append(turn)
        for _, turns in sorted(sessions.items()):
            when = turns[0].when.replace(tzinfo=UTC) if turns[0].when else datetime.now(UTC)
            messages = [Message(role="user", content=t.content, name=t.speaker, timestamp=when) for t in turns]
            result = memory.add(messages, user_id=conversation.sample_id)
            doc_of.update({event.id: t.dia_id for event, t in zip(result.results, turns, strict=True)})
    memory.close()
    mapping.write_text(json.dumps(doc_of))
    return path, doc_of


def madial_store(embedder: CachedEmbedder, language: str) -> tuple[Path, dict[str, str]]:
    path = CACHE_DIR / f"deep-madial-{language}.db"
    mapping = CACHE_DIR / f"deep-madial-{language}-docs.json"
    if path.exists() and mapping.exists():
        return path, json.loads(mapping.read_text())
    path.unlink(missing_ok=True)
    memory = Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))
    doc_of: dict[str, str] = {}
    by_user: dict[str, list[Any]] = {}
    for item in load_madial(language).memories:
        by_user.setdefault(item.user_id, []).append(item)
    for user, items in tqdm(by_user.items(), desc=f"ingest madial-{language}"):
        result = memory.add([item.text for item in items], user_id=user)
        doc_of.update({event.id: items[event.index or 0].memory_id for event in result.results})
    memory.close()
    mapping.write_text(json.dumps(doc_of))
    return path, doc_of


# --- questions ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ask:
    dataset: str
    scope: str
    text: str
    relevant: tuple[str, ...]
    category: int = 0


def evenly(items: Sequence[Any], n: int) -> list[Any]:
    if n >= len(items):
        return list(items)
    return [items[round(i * (len(items) - 1) / max(1, n - 1))] for i in range(n)]


def question_sets(stride: int, per_category: int, madial: int) -> tuple[list[Ask], list[Ask]]:
    locomo = [
        Ask("locomo", q.conversation, q.question.strip(), q.evidence, q.category)
        for c in load_locomo()
        for q in c.questions
    ]
    dialogues = {
        lang: [Ask(f"madial-{lang}", q.user_id, q.query.strip(), q.relevant) for q in load_madial(lang).queries]
        for lang in ("zh", "en")
    }
    offline = locomo[::stride] + dialogues["zh"] + dialogues["en"]
    groups = [evenly([a for a in locomo if a.category == number], per_category) for number in LOCOMO_CATEGORIES]
    groups += [evenly(dialogues["zh"], madial), evenly(dialogues["en"], madial)]
    # Round-robin over the groups: a run stopped early still covers every category and both languages.
    model = [group[i] for i in range(max(map(len, groups))) for group in groups if i < len(group)]
    return offline, model


# --- running ------------------------------------------------------------------------------------
def open_memory(path: Path, embedder: CachedEmbedder, config: Config, model: ChatModel | None) -> Memory:
    settings = load_settings(
        {"store": {"path": str(path)}, "deep": config.deep, "rerank": config.rerank, "write": {"background": False}}
    )
    return Memory(SQLiteStore(path), embedder, settings=settings, chat_model=model)


def run_config(
    config: Config,
    asks: Sequence[Ask],
    stores: dict[str, tuple[Path, dict[str, str]]],
    embedder: CachedEmbedder,
    model: ChatModel | None,
    progress: Callable[[list[dict[str, Any]]], None] = lambda rows: None,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    opened = {name: open_memory(path, embedder, config, model) for name, (path, _) in stores.items()}
    try:
        for ask in tqdm(asks, desc=config.name[:40], leave=False):
            memory = opened["locomo" if ask.dataset == "locomo" else ask.dataset]
            doc_of = stores["locomo" if ask.dataset == "locomo" else ask.dataset][1]
            started = datetime.now(UTC)
            spent_before = getattr(model, "spent", 0.0)
            if config.mode == "fast":
                hits, trace = memory.search(ask.text, user_id=ask.scope, limit=K), None
            else:
                result = memory.deep_search(ask.text, user_id=ask.scope, limit=K)
                hits, trace = result.hits, result.trace
            wall = (datetime.now(UTC) - started).total_seconds()
            in_model = getattr(model, "spent", 0.0) - spent_before  # replayed answers cost ~0 here
            top = list(dict.fromkeys(doc_of[h.id] for h in hits if h.id in doc_of))
            rows.append(
                {
                    "dataset": ask.dataset,
                    "category": ask.category,
                    "recall": metrics.recall_at_k(ask.relevant, top, K),
                    "calls": trace.model_calls if trace else 0,
                    "prompt_tokens": trace.prompt_tokens if trace else 0,
                    "completion_tokens": trace.completion_tokens if trace else 0,
                    "model_s": trace.model_seconds if trace else 0.0,
                    "search_s": round(wall - in_model, 3),
                    "rounds": len(trace.rounds) if trace else 1,
                    "fallbacks": trace.fallbacks if trace else 0,
                    "stopped": trace.stopped if trace else "",
                    "question": ask.text[:200],
                    "understood": trace.understanding.question[:200] if trace else "",
                }
            )
            progress(rows)
    finally:
        for memory in opened.values():
            memory.close()
    return rows


def context_rows(
    mode: str,
    asks: Sequence[Ask],
    store: tuple[Path, dict[str, str]],
    embedder: CachedEmbedder,
    model: ChatModel | None,
) -> list[dict[str, Any]]:
    memory = open_memory(store[0], embedder, CONFIGS[1], model)
    rows = []
    try:
        for ask in tqdm([a for a in asks if a.dataset == "locomo"], desc=f"context {mode}", leave=False):
            built = memory.context(
                ask.text, user_id=ask.scope, budget_tokens=CONTEXT_BUDGET, limit=CONTEXT_LIMIT, mode=mode
            )  # type: ignore[arg-type]
            cited = [store[1][i] for i in built.citations if i in store[1]]
            rows.append(
                {
                    "category": ask.category,
                    "tokens": built.tokens,
                    "recall": metrics.recall_at_k(ask.relevant, cited, len(cited) or 1),
                    "memories": len(built.memories),
                }
            )
    finally:
        memory.close()
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str, chosen: Sequence[dict[str, Any]]) -> float:
        return round(statistics.fmean(r[key] for r in chosen), 4) if chosen else 0.0

    out: dict[str, Any] = {}
    for dataset in sorted({r["dataset"] for r in rows}):
        mine = [r for r in rows if r["dataset"] == dataset]
        entry = {
            "n": len(mine),
            **{
                key: mean(key, mine)
                for key in (
                    "recall",
                    "calls",
                    "prompt_tokens",
                    "completion_tokens",
                    "model_s",
                    "search_s",
                    "rounds",
                    "fallbacks",
                )
            },
        }
        if dataset == "locomo":
            entry["by_category"] = {
                LOCOMO_CATEGORIES[c]: {"n": len(s), "recall": mean("recall", s)}
                for c in LOCOMO_CATEGORIES
                if (s := [r for r in mine if r["category"] == c])
            }
        out[dataset] = entry
    return out


# --- report ---------------------------------------------------------------------------------------
def _table(title: str, results: dict[str, dict[str, Any]]) -> list[str]:
    categories = list(LOCOMO_CATEGORIES.values())
    lines = [
        f"### {title}",
        "",
        "| configuration | LoCoMo r@10 (n) | "
        + " | ".join(categories)
        + " | MADial zh r@10 | MADial en r@10 | model calls / q | tokens in+out / q | model s / q | search s / q |",
        "|---" * (8 + len(categories)) + "|",
    ]
    for name, by_dataset in results.items():
        loco = by_dataset.get("locomo", {})
        cats = [f"{loco.get('by_category', {}).get(c, {}).get('recall', 0):.3f}" for c in categories]
        rows = [d for d in by_dataset.values() if isinstance(d, dict) and "n" in d]
        total = sum(d["n"] for d in rows) or 1

        def weighted(key: str, rows: list[dict[str, Any]] = rows, total: int = total) -> float:
            return sum(d[key] * d["n"] for d in rows) / total

        zh, en = by_dataset.get("madial-zh", {}), by_dataset.get("madial-en", {})
        lines.append(
            f"| {name} | {loco.get('recall', 0):.3f} ({loco.get('n', 0)}) | "
            + " | ".join(cats)
            + f" | {zh.get('recall', 0):.3f} | {en.get('recall', 0):.3f} | {weighted('calls'):.2f} | "
            f"{weighted('prompt_tokens'):.0f}+{weighted('completion_tokens'):.0f} | {weighted('model_s'):.1f} | "
            f"{weighted('search_s'):.3f} |"
        )
    return [*lines, ""]


def write_report(out: dict[str, Any], stem: Path) -> None:
    stem.with_suffix(".json").write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    lines = ["## Deep retrieval (issue 15) on the dev sets", "", out["note"], ""]
    for key, title in (
        ("offline", "Offline set: no model (deep = its heuristics)"),
        ("model", f"Model set: bundled model {out.get('model_id', '')}"),
    ):
        if key in out:
            lines += [f"Questions: {out[key]['questions']}.", "", *_table(title, out[key]["summary"])]
    for key, values in out.get("context", {}).items():
        lines.append(
            f"- context ({key}): mean tokens {values['tokens_mean']:.0f}, max {values['tokens_max']} "
            f"(budget {CONTEXT_BUDGET}), evidence recall in context {values['recall']:.3f} "
            f"(n={values['n']})"
        )
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _context_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "n": len(rows),
        "tokens_mean": statistics.fmean(r["tokens"] for r in rows) if rows else 0,
        "tokens_max": max((r["tokens"] for r in rows), default=0),
        "recall": round(statistics.fmean(r["recall"] for r in rows), 4) if rows else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("local", "none"), default="local")
    parser.add_argument("--stride", type=int, default=4, help="offline set: every n-th LoCoMo question")
    parser.add_argument("--per-category", type=int, default=8, help="model set: LoCoMo questions per category")
    parser.add_argument("--madial", type=int, default=10, help="model set: MADial dialogues per language")
    parser.add_argument("--rerank", action="store_true", help="model set: also deep with the LLM reranker")
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--suffix", default="")
    parser.add_argument("--only", default="", help="model set: configurations by first word, e.g. fast,deep")
    args = parser.parse_args()
    logging.getLogger("memstrata").setLevel(logging.WARNING)
    embedder = CachedEmbedder()
    stores = {
        "locomo": locomo_store(embedder),
        "madial-zh": madial_store(embedder, "zh"),
        "madial-en": madial_store(embedder, "en"),
    }
    offline, model_set = question_sets(args.stride, args.per_category, args.madial)
    stem = RESULTS / f"{date.today().isoformat()}-deep{args.suffix}"
    out: dict[str, Any] = {
        "note": f"Dev sets only; embedder {embedder.model_id}; K={K}; machine: 2 CPU cores shared with other "
        f"agents (load {os.getloadavg()[0]:.1f} at start). Offline set: every {args.stride}th LoCoMo question "
        f"and all MADial dialogues. Model set: {args.per_category} LoCoMo questions per category and "
        f"{args.madial} MADial dialogues per language, evenly spaced in dataset order.",
        "context": {},
    }
    if not args.skip_offline:
        results = {c.name: run_config(c, offline, stores, embedder, None) for c in CONFIGS}
        out["offline"] = {"questions": len(offline), "summary": {n: summary(r) for n, r in results.items()}}
        for mode in ("fast", "deep"):
            out["context"][f"offline set, {mode}"] = _context_summary(
                context_rows(mode, offline, stores["locomo"], embedder, None)
            )
        write_report(out, stem)
    if args.model == "local":
        from memstrata.providers.local_llm import assemble_gguf, default_cache_dir, shared_local_model

        inner = shared_local_model(assemble_gguf(default_cache_dir(os.environ)))
        model = RecordedChat(inner, CACHE_DIR / "deep-model-answers.jsonl")
        out["model_id"] = model.model_id
        configs = [*CONFIGS] + ([RERANK] if args.rerank else [])  # fast first: it is cheap and the baseline
        if args.only:
            configs = [c for c in configs if c.name.split(" ")[0] in args.only.split(",")]
        results: dict[str, list[dict[str, Any]]] = {}

        def report(name: str, rows: list[dict[str, Any]]) -> None:
            results[name] = rows
            out["model"] = {
                "questions": f"{len(model_set)} planned; answered per configuration: "
                + ", ".join(f"{n} {len(r)}" for n, r in results.items()),
                "summary": {n: summary(r) for n, r in results.items()},
                "rows": results,
            }
            write_report(out, stem)

        for config in configs:
            report(config.name, run_config(config, model_set, stores, embedder, model,
                                           progress=lambda rows, name=config.name: report(name, rows)))  # fmt: skip
        out["context"]["model set, deep"] = _context_summary(
            context_rows("deep", model_set, stores["locomo"], embedder, model)
        )
        out["context"]["model set, fast"] = _context_summary(
            context_rows("fast", model_set, stores["locomo"], embedder, model)
        )
        write_report(out, stem)


if __name__ == "__main__":
    main()
