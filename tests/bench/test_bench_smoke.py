"""A tiny end-to-end run of the benchmark harness, so it cannot rot unnoticed.

Quality: a few LoCoMo questions over two sessions of one conversation, three MADial dialogues,
and a generated LongMemEval-format file. Speed: a 200-memory scale point (memstrata, chromadb,
qdrant local), a small throughput run and a two-process concurrency run. It checks that the
output files exist, the metric keys are there and every metric lies in [0, 1]. It asserts
nothing about speed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.concurrency import run_concurrency  # noqa: E402  (the repo root must be importable first)
from bench.datasets import (  # noqa: E402
    DATA_DIR,
    Conversation,
    MadialSet,
    load_locomo,
    load_longmemeval,
    load_madial,
    write_tiny_longmemeval,
)
from bench.embedders import CachedEmbedder, HashEmbedder  # noqa: E402
from bench.machine import machine_facts  # noqa: E402
from bench.quality import build_systems, run_locomo, run_longmemeval, run_madial  # noqa: E402
from bench.report import write as write_results  # noqa: E402
from bench.scale import ensure_query_vectors, run_scale  # noqa: E402
from bench.speed import real_turns, short_facts  # noqa: E402

pytestmark = pytest.mark.skipif(not (DATA_DIR / "locomo10.json").exists(), reason="benchmark data not present")


def _metrics(tree: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(tree, dict):
        for key, value in tree.items():
            if isinstance(value, int | float) and key.split("@")[0] in {
                "recall", "hit_any", "ndcg", "ndcg_madial", "recall_any", "recall_all", "ndcg_any"
            }:  # fmt: skip
                yield f"{prefix}{key}", float(value)
            else:
                yield from _metrics(value, f"{prefix}{key}.")


def _small_locomo() -> Conversation:
    conv = load_locomo()[0]
    turns = tuple(t for t in conv.turns if t.session <= 2)
    ids = {t.dia_id for t in turns}
    questions = tuple(q for q in conv.questions if q.evidence and set(q.evidence) <= ids)[:6]
    return Conversation(conv.sample_id, turns, questions)


def test_bench_smoke(tmp_path: Path, embedder: Any) -> None:
    cached = CachedEmbedder(inner=embedder, path=tmp_path / "vectors.sqlite")
    quality: dict[str, Any] = {}
    systems, quality["skipped"] = build_systems(cached, tmp_path / "locomo", reference_bm25=True)
    quality["locomo"] = run_locomo([_small_locomo()], systems, progress=False)
    zh = load_madial("zh")
    small = MadialSet(
        "zh", tuple(m for m in zh.memories if m.user_id == "1"), tuple(q for q in zh.queries if q.user_id == "1")[:3]
    )
    systems, _ = build_systems(cached, tmp_path / "madial")
    quality["madial-zh"] = run_madial(small, systems, progress=False)
    instances, dropped = load_longmemeval(write_tiny_longmemeval(tmp_path / "lme.json"))
    assert dropped == 1 and len(instances) == 2
    quality["longmemeval"] = run_longmemeval(
        instances, lambda work: build_systems(cached, work)[0], dropped=dropped, progress=False
    )

    query_vectors = ensure_query_vectors(20, HashEmbedder(), tmp_path / "queries.npy")
    scale = run_scale(
        ["memstrata", "chromadb", "qdrant-local"],
        [200],
        baseline_max_n=200,
        real_vectors=0,
        queries=20,
        budget_s={},
        model_id=HashEmbedder.model_id,
        query_vectors=query_vectors,
        workdir=tmp_path / "scale",
        progress=False,
    )
    throughput = {
        "real_turns": real_turns(load_locomo()[:1], 20, embedder, progress=False),
        "short_facts": [short_facts(40, 20, embedder, progress=False)],
    }
    speed = {"scale": scale, "concurrency": run_concurrency(2, 10, prepopulate=50)}
    result = {"machine": machine_facts(), "quality": quality, "speed": speed}
    written = write_results(result, "smoke", tmp_path / "results")

    names = {p.name.split("-smoke")[-1] for p in written}
    assert {".json", ".md", "-locomo.png", "-scale.png", "-locomo-details.json"} <= names
    saved = json.loads(next(p for p in written if p.name.endswith("-smoke.json")).read_text())
    for name in ("bm25-whitespace", "bm25", "dense", "memstrata-hybrid"):
        overall = saved["quality"]["locomo"]["systems"][name]["overall"]
        assert {f"{m}@{k}" for m in ("recall", "hit_any", "ndcg") for k in (5, 10, 25, 50)} <= set(overall)
    assert "memstrata-infer" in saved["quality"]["skipped"]
    lme = saved["quality"]["longmemeval"]["turn_granularity"]["memstrata-hybrid"]
    assert {f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any") for k in (1, 3, 5, 10, 30, 50)} <= set(
        lme["turn"]
    )
    found = dict(_metrics(saved["quality"]))
    assert len(found) > 100
    assert all(0.0 <= v <= 1.0 for v in found.values()), {k: v for k, v in found.items() if not 0 <= v <= 1}
    for store in ("memstrata", "chromadb", "qdrant-local"):
        points = saved["speed"]["scale"]["stores"][store]["points"]
        assert points and points[0]["n"] == 200 and points[0]["search"]["p95_ms"] > 0
    fresh = saved["speed"]["scale"]["stores"]["memstrata"]["points"][0]["fresh_process"]  # a new process's view
    assert fresh["search"]["p95_ms"] > 0 and fresh["open_first_search_ms"] > 0
    assert 0 < fresh["rss_anon_mb"] < fresh["rss_mb"] and fresh["rss_file_mb"] > 0
    assert saved["speed"]["concurrency"]["errors"] == 0
    assert throughput["real_turns"]["turns"] >= 20 and throughput["short_facts"][0]["add_per_s"] > 0


def test_metric_definitions() -> None:
    """Pin the official definitions, including LongMemEval's DCG (ranks 1 and 2 both undiscounted)."""
    from bench import metrics

    assert metrics.recall_at_k(["a", "b"], ["a", "x", "b"], 2) == 0.5
    assert metrics.recall_at_k([], ["x"], 5) == 1.0  # LoCoMo: no evidence scores 1
    assert metrics.hit_any_at_k(["a", "b"], ["x", "b"], 2) == 1.0
    assert metrics.ndcg_at_k(["a"], ["x", "a"], 2) == pytest.approx(1 / 1.584962500721156)
    assert metrics.ndcg_madial(["a"], ["x", "a"], 2) == pytest.approx(1 / 1.584962500721156)
    assert metrics.ndcg_madial(["a", "b", "c"], ["a", "x"], 2) == 1.0  # ideal = best re-ordering of the retrieved
    corpus = ["s1_1", "s1_3", "s2_1", "s3_1"]
    assert metrics.lme_evaluate([1, 0], {"s1_1"}, corpus, 2)["ndcg_any@2"] == 1.0
    scores = metrics.lme_evaluate([2, 0, 1], {"s1_1", "s1_3"}, corpus, 2)
    assert scores == {"recall_any@2": 1.0, "recall_all@2": 0.0, "ndcg_any@2": pytest.approx(0.5)}
    # turn -> session: k widens until 2 distinct sessions are covered (s1 twice, then s2)
    assert metrics.lme_turn_to_session([0, 1, 2], {"s2_1"}, corpus, 2)["recall_any@2"] == 1.0


def test_graph_bench_smoke(tmp_path: Path, embedder: Any) -> None:
    """LoCoMo through the write path with and without the graph list, on two sessions of one conversation."""
    from bench.graph_bench import markdown, run_locomo_graph

    result = {"locomo": run_locomo_graph([_small_locomo()], embedder, tmp_path)}
    recall = result["locomo"]["recall"]
    assert set(recall) == {"graph", "no graph"} and "all@10" in recall["graph"]
    assert all(0.0 <= value <= 1.0 for table in recall.values() for value in table.values())
    assert result["locomo"]["turns"] > 20 and set(result["locomo"]["write_ms_per_turn"]) == {"graph", "no graph"}
    assert "| graph |" in markdown(result)


def test_keyword_copy_bench_smoke(tmp_path: Path) -> None:
    """bench/keyword_copy.py on a tiny store: both sides answer alike and the files are written."""
    from bench import keyword_copy

    assert keyword_copy.main(["--sizes", "40", "--queries", "6", "--rounds", "1", "--out", str(tmp_path)]) == 0
    (written,) = tmp_path.glob("*-keyword-copy-threshold.json")
    (row,) = json.loads(written.read_text())["sizes"]
    assert row["n"] == 40 and row["differing_lists"] == 0.0 and row["build_ms"] > 0
    assert (tmp_path / written.name.replace(".json", ".md")).read_text().count("| 40 |") == 1
