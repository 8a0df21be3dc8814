"""Keyword terms A/B on MADial zh/en: jieba's words alone (search terms v1) against the words plus the characters
of each Chinese word (v2, the default), both through memstrata's own store and ranker, in one run.

``python -m bench.keyword_terms`` writes ``bench/results/<date>-keyword-terms.{json,md}``: recall@10 and nDCG@10
of the fused ranking, recall@10 of the keyword list alone, and at the default relevance cutoff the share of
relevant top-10 hits kept and of off-topic questions that still get an answer. Dev sets only.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from bench import ranking_data
from bench.datasets import load_madial
from bench.embedders import CachedEmbedder
from bench.machine import machine_facts, machine_line
from bench.ranking_sweep import DEFAULT, K, cutoff_curve, quality
from memstrata import lexical
from memstrata.read import retrieve
from memstrata.storage.sqlite import dialect as sqlite_dialect

RESULTS = Path(__file__).resolve().parent / "results"


def _words_only(text: str) -> list[str]:
    return lexical.keyword_tokens(text)


@contextmanager
def _terms(search_terms: Callable[[str], list[str]]) -> Iterator[None]:
    """Index and query with ``search_terms`` (where the store and the bench's query path import it)."""
    saved = (sqlite_dialect.index_document, retrieve.search_terms, ranking_data.search_terms)
    sqlite_dialect.index_document = lambda text: " ".join(search_terms(text))
    retrieve.search_terms = ranking_data.search_terms = search_terms
    try:
        yield
    finally:
        sqlite_dialect.index_document, retrieve.search_terms, ranking_data.search_terms = saved


def measure(language: str, search_terms: Callable[[str], list[str]], embedder: Any) -> dict[str, Any]:
    with _terms(search_terms), tempfile.TemporaryDirectory() as tmp:
        corpus = ranking_data.build_madial(load_madial(language), embedder, Path(tmp))
    keyword_recall = [
        len({doc for doc, _ in case.keyword[:K]} & case.relevant) / len(case.relevant) for case in corpus.cases
    ]
    cutoff = cutoff_curve(corpus, DEFAULT, [DEFAULT.min_relevance])[0]
    return {
        **quality(corpus, DEFAULT),
        "keyword_only_recall@10": round(sum(keyword_recall) / len(keyword_recall), 4),
        "relevant_kept": cutoff["relevant_kept"],
        "off_topic_answered": cutoff["off_topic_answered"],
        "queries": len(corpus.cases),
    }


def run() -> dict[str, Any]:
    embedder = CachedEmbedder()
    variants = {"v1: words": _words_only, "v2: words + characters (default)": lexical.search_terms}
    rows = [
        {"language": language, "terms": name, **measure(language, terms, embedder)}
        for language in ("zh", "en")
        for name, terms in variants.items()
    ]
    return {"machine": machine_facts(), "min_relevance": DEFAULT.min_relevance, "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "## Keyword terms: words alone vs words + the characters of each Chinese word (MADial dev sets)",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        "Both variants through memstrata's store (SQLite FTS5) and ranker with the default settings, "
        f"in one run; cutoff columns at min_relevance {result['min_relevance']}.",
        "",
        "| set | terms | recall@10 | nDCG@10 | keyword list alone r@10 | relevant kept | off-topic answered |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        lines.append(
            f"| MADial {row['language']} ({row['queries']} q) | {row['terms']} | {row['recall@10']:.3f} | "
            f"{row['ndcg@10']:.3f} | {row['keyword_only_recall@10']:.3f} | {row['relevant_kept']:.3f} | "
            f"{row['off_topic_answered']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.keyword_terms", description=__doc__)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run()
    stem = args.out / f"{date.today().isoformat()}-keyword-terms"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(stem.with_suffix(".md").read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
