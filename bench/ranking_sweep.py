"""Ranking sweep on the dev sets: memory units x fusion settings, and where the relevance cutoff falls.

``python -m bench.ranking_sweep [--quick]`` reads the candidate signals bench/ranking_data.py
collected (built on first use) and ranks every query through memstrata's own
``read.rank.fuse_candidates``, the function search uses, for each configuration. It writes
``bench/results/<date>-ranking.{json,md}``: recall@10 overall and per LoCoMo category, MADial
recall@10 and nDCG@10, and for the cutoff the share of relevant top-10 hits kept against the
share of off-topic and foreign queries that still return something.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import metrics
from bench.datasets import LOCOMO_CATEGORIES
from bench.ranking_data import UNITS, Case, Corpus, corpora
from memstrata.read.rank import MemoryText, Ranker, keyword_matches_to_read, pool
from memstrata.read.retrieve import Retrieved
from memstrata.read.settings import ReadSettings
from memstrata.storage.protocol import ScoredId
from memstrata.write import ingest

RESULTS = Path(__file__).resolve().parent / "results"
CONTEXT_WEIGHTS = (1.0, 0.75, 0.5, 0.3, 0.25, 0.0)
DEFAULT = ReadSettings()
K = 10


@dataclass(frozen=True)
class Scored:
    doc_id: str
    relevance: float


def _memory_text(indexed: str) -> MemoryText:
    """One language per dataset. A LoCoMo turn is indexed as "speaker: turn" and then one line per
    preceding turn (2 of 5,882 LoCoMo turns hold a line break), so its own part is the first line."""
    head, newline, _ = indexed.partition("\n")
    return MemoryText(indexed, indexed, own_indexed=head if newline else None)


def rank_case(case: Case, corpus: Corpus, settings: ReadSettings, limit: int = K) -> list[Scored]:
    """The case's top ``limit`` as search ranks them (lifecycle aside: every memory here is equally
    old and unused), without the relevance cutoff: the same Ranker, pool and settle steps."""
    retrieved = Retrieved(
        keyword=[ScoredId(doc, score) for doc, score in case.keyword[: settings.candidates]],
        dense=[ScoredId(doc, score) for doc, score in case.dense[: settings.candidates]],
        dense_limit=settings.candidates,
    )
    docs = corpus.indexed[case.scope]
    ranker = Ranker(case.text, settings)
    texts = {doc: _memory_text(text) for doc, text in docs.items()}
    ranked = ranker.candidates(retrieved, {doc: texts[doc] for doc in keyword_matches_to_read(retrieved)})
    chosen = [ranker.settle(c, texts[c.memory_id]) for c in pool(ranked, max(limit * 3, 30), max(limit, 10))]
    chosen.sort(key=lambda c: c.fused, reverse=True)
    return [Scored(c.memory_id, c.relevance) for c in chosen[:limit]]


def quality(corpus: Corpus, settings: ReadSettings, cases: Sequence[Case] | None = None) -> dict[str, Any]:
    """recall@10 and nDCG@10 overall (and per LoCoMo category), with no cutoff."""
    rows: dict[int, list[tuple[float, float]]] = {}
    for case in cases if cases is not None else corpus.cases:
        top = [hit.doc_id for hit in rank_case(case, corpus, settings)]
        score = (metrics.recall_at_k(case.relevant, top, K), metrics.ndcg_at_k(case.relevant, top, K))
        rows.setdefault(case.category, []).append(score)
    every = [row for group in rows.values() for row in group]
    out: dict[str, Any] = {
        "recall@10": round(statistics.mean(r for r, _ in every), 4),
        "ndcg@10": round(statistics.mean(n for _, n in every), 4),
    }
    if corpus.name == "locomo":
        out["by_category"] = {
            LOCOMO_CATEGORIES[number]: round(statistics.mean(r for r, _ in rows.get(number, [(0.0, 0.0)])), 4)
            for number in LOCOMO_CATEGORIES
        }
    return out


def cutoff_curve(corpus: Corpus, settings: ReadSettings, levels: Iterable[float]) -> list[dict[str, float]]:
    """For each minimum relevance: the share of relevant docs in the top 10 that survive it, and the
    share of off-topic / foreign queries that still return at least one hit."""
    relevant_scores = []
    for case in corpus.cases:
        relevant_scores += [h.relevance for h in rank_case(case, corpus, settings) if h.doc_id in case.relevant]
    best = {
        name: [max((h.relevance for h in rank_case(case, corpus, settings, 1)), default=0.0) for case in group]
        for name, group in (("off_topic", corpus.off_topic), ("foreign", corpus.foreign))
    }
    curve = []
    for level in levels:
        row = {"min_relevance": level, "relevant_kept": _share(relevant_scores, level)}
        row.update({f"{name}_answered": _share(scores, level) for name, scores in best.items()})
        curve.append(row)
    return curve


def _share(values: Sequence[float], level: float) -> float:
    return round(sum(1 for value in values if value >= level) / len(values), 4) if values else 0.0


def configurations(quick: bool) -> list[tuple[str, ReadSettings]]:
    configs = [
        (
            "rrf (first release: k=20, keyword 1.0 / dense 0.5)",
            replace(DEFAULT, fusion="rrf", keyword_weight=1.0, dense_weight=0.5),
        )
    ]
    weights = (0.6, 0.7, 0.8) if quick else (0.5, 0.6, 0.7, 0.8, 0.9)
    bands = ((0.1, 0.7),) if quick else ((0.05, 0.6), (0.1, 0.6), (0.1, 0.7), (0.15, 0.65), (0.2, 0.7))
    for keyword, (floor, ceiling) in itertools.product(weights, bands):
        name = f"score: keyword {keyword} / dense {1 - keyword:.1f}, cosine {floor}..{ceiling}"
        configs.append(
            (
                name,
                replace(
                    DEFAULT,
                    keyword_weight=keyword,
                    dense_weight=round(1 - keyword, 2),
                    dense_floor=floor,
                    dense_ceiling=ceiling,
                ),
            )
        )
    return configs


def run(quick: bool) -> dict[str, Any]:
    every = list(corpora())
    out: dict[str, Any] = {"k": K, "units": {}, "sweep": [], "cutoff": {}}
    unit = next(name for name, turns in UNITS.items() if turns == ingest.CONTEXT_TURNS)
    default_unit = [c for c in every if c.name != "locomo" or c.unit == unit]
    for corpus in (c for c in every if c.name == "locomo"):  # memory units, with the default fusion and rrf
        out["units"][corpus.unit] = {
            "score": quality(corpus, DEFAULT),
            "score, context words count fully": quality(corpus, replace(DEFAULT, context_weight=1.0)),
            "rrf": quality(corpus, replace(DEFAULT, fusion="rrf", keyword_weight=1.0, dense_weight=0.5)),
        }
    locomo = next(c for c in default_unit if c.name == "locomo")
    out["context_weight"] = {
        str(weight): quality(locomo, replace(DEFAULT, context_weight=weight)) for weight in CONTEXT_WEIGHTS
    }
    for name, settings in tqdm(configurations(quick), desc="sweep"):
        out["sweep"].append({"config": name, **{f"{c.name}": quality(c, settings) for c in default_unit}})
    levels = [round(0.05 * i, 2) for i in range(0, 11)]
    for corpus in default_unit:
        out["cutoff"][corpus.name] = cutoff_curve(corpus, DEFAULT, levels)
    out["defaults"] = {
        "unit": unit,
        "context_weight": DEFAULT.context_weight,
        "keyword_weight": DEFAULT.keyword_weight,
        "dense_weight": DEFAULT.dense_weight,
        "dense_floor": DEFAULT.dense_floor,
        "dense_ceiling": DEFAULT.dense_ceiling,
        "min_relevance": DEFAULT.min_relevance,
        "candidates": DEFAULT.candidates,
    }
    return out


def _locomo_table(keys: list[str], rows: Iterable[tuple[Any, ...]]) -> list[str]:
    """Rows of (key cells..., quality): recall@10, nDCG@10 and recall@10 per LoCoMo category."""
    lines = [
        "| " + " | ".join(keys) + " | recall@10 | nDCG@10 | " + " | ".join(LOCOMO_CATEGORIES.values()) + " |",
        "|" + "---|" * (len(keys) + 2 + len(LOCOMO_CATEGORIES)),
    ]
    for *cells, q in rows:
        numbers = [q["recall@10"], q["ndcg@10"], *q["by_category"].values()]
        lines.append("| " + " | ".join(map(str, cells)) + " | " + " | ".join(f"{v:.3f}" for v in numbers) + " |")
    return lines


def markdown(result: dict[str, Any]) -> str:
    lines = ["## Ranking sweep (dev sets: LoCoMo, MADial zh/en)", ""]
    lines += [
        "Every query ranked by `memstrata.read.rank.Ranker` (as search does) over the store's own keyword (BM25) and",
        "dense (cosine) lists, 100 candidates each; recall@10 and nDCG@10 with no cutoff. Defaults: "
        + ", ".join(f"{k} {v}" for k, v in result["defaults"].items())
        + ".",
        "",
        "### Memory unit (LoCoMo): earlier turns indexed with each turn",
        "",
    ]
    rows = [(unit, fusion, q) for unit, by_fusion in result["units"].items() for fusion, q in by_fusion.items()]
    lines += _locomo_table(["unit", "fusion"], rows)
    lines += ["", f"### Context weight (LoCoMo, unit {result['defaults']['unit']})", ""]
    lines += [
        "Share of keyword evidence a turn gets for query words that only the earlier turns indexed with it hold",
        "(`search.context_weight`): below 1 the answer's own turn ranks above the turn that follows it.",
        "",
    ]
    lines += _locomo_table(["context_weight"], [(weight, q) for weight, q in result["context_weight"].items()])
    lines += ["", f"### Fusion sweep (unit: {result['defaults']['unit']})", ""]
    lines += ["| configuration | LoCoMo r@10 | multi-hop | MADial zh r@10 | zh nDCG@10 | MADial en r@10 | en nDCG@10 |"]
    lines += ["|---|---|---|---|---|---|---|"]
    for row in result["sweep"]:
        lo, zh, en = row["locomo"], row["madial-zh"], row["madial-en"]
        cells = [lo["recall@10"], lo["by_category"]["multi-hop"], zh["recall@10"], zh["ndcg@10"]]
        cells += [en["recall@10"], en["ndcg@10"]]
        lines.append(f"| {row['config']} | " + " | ".join(f"{cell:.3f}" for cell in cells) + " |")
    lines += ["", "### Relevance cutoff (defaults)", ""]
    lines += [
        "Relevant kept: share of relevant docs in the top 10 whose relevance clears the cutoff. Answered: share of",
        "off-topic questions (24 bilingual, per scope) / questions asked of another scope that return any hit.",
        "",
    ]
    lines += [
        "| min_relevance | "
        + " | ".join(f"{n} relevant kept | {n} off-topic answered | {n} foreign answered" for n in result["cutoff"])
        + " |"
    ]
    lines += ["|---|" + "---|---|---|" * len(result["cutoff"])]
    for i, level in enumerate(next(iter(result["cutoff"].values()))):
        cells = []
        for curve in result["cutoff"].values():
            row = curve[i]
            cells += [
                f"{row['relevant_kept']:.3f}",
                f"{row['off_topic_answered']:.3f}",
                f"{row['foreign_answered']:.3f}",
            ]
        lines.append(f"| {level['min_relevance']:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ranking_sweep", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer configurations")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.quick)
    stem = args.out / f"{date.today().isoformat()}-ranking{'-quick' if args.quick else ''}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(stem.with_suffix(".md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
