"""Search latency, RSS and size on disk as one scope grows: 1k, 10k, 100k, 1M memories.

Each store runs in its own process (``python -m bench scale-worker SPEC``) so its RSS is its own.
All stores get the same generated facts and the same precomputed vectors: real USE vectors for
the first ``real_vectors`` facts (computed once, cached under ``bench/.cache``), seeded random
unit vectors beyond that (labelled in the results). Query vectors are real USE vectors.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil
from tqdm import tqdm

from bench import facts
from bench.baselines.stores import dir_size, make_store
from bench.datasets import REPO_ROOT
from bench.embedders import CACHE_DIR, DIMS, CachedEmbedder, Vectors, random_unit_vectors
from bench.metrics import percentiles

FACT_VECTORS = CACHE_DIR / "fact-vectors-use.f32"
QUERY_VECTORS = CACHE_DIR / "query-vectors-use.npy"
INSERT_BATCH = 10_000


def _fingerprint() -> str:
    return "|".join(facts.fact(i) for i in (0, 1, 12345, 999_999))


def ensure_fact_vectors(count: int, embedder: CachedEmbedder, *, progress: bool = True) -> int:
    """Make sure the first ``count`` facts have USE vectors on disk; returns how many exist."""
    meta = FACT_VECTORS.with_suffix(".json")
    if meta.exists() and json.loads(meta.read_text())["fingerprint"] != _fingerprint():
        FACT_VECTORS.unlink(missing_ok=True)  # the fact generator changed: start over
    have = FACT_VECTORS.stat().st_size // (4 * DIMS) if FACT_VECTORS.exists() else 0
    if have < count:
        FACT_VECTORS.parent.mkdir(parents=True, exist_ok=True)
        with FACT_VECTORS.open("ab") as out, tqdm(total=count - have, desc="embed facts", disable=not progress) as bar:
            for start in range(have, count, 128):  # USE is fastest on batches of ~64-256 short texts
                n = min(128, count - start)
                out.write(embedder.inner.embed_batch(facts.facts(start, n)).astype(np.float32).tobytes())
                bar.update(n)
        meta.write_text(json.dumps({"fingerprint": _fingerprint(), "model": embedder.model_id}))
    return max(have, count)


def fact_vectors(start: int, count: int, real: int, path: Path = FACT_VECTORS) -> Vectors:
    """Rows [start, start+count): cached USE vectors below ``real``, random unit vectors above."""
    out = np.empty((count, DIMS), dtype=np.float32)
    n_real = max(0, min(start + count, real) - start)
    if n_real:
        out[:n_real] = np.fromfile(path, dtype=np.float32, count=n_real * DIMS, offset=start * DIMS * 4).reshape(
            n_real, DIMS
        )
    if n_real < count:
        out[n_real:] = random_unit_vectors(start + n_real, count - n_real)
    return out


def ensure_query_vectors(count: int, embedder: Any, path: Path = QUERY_VECTORS) -> Path:
    """USE vectors of the query set (any embedder in tests), saved where the workers read them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, embedder.embed_batch(facts.queries(count)))
    return path


# --- the worker (one store, one process) ----------------------------------------------------
def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def _peak_rss_mb() -> float:
    """VmHWM of this process (getrusage's maxrss survives exec, so it would report the parent's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _store_files(store: Any) -> dict[str, int]:
    """Bytes on disk per file (a SQLite store: the database, its WAL and shared-memory file)."""
    path: Path = store.path
    if path.is_file() or not path.exists():
        return {p.name: dir_size(p) for p in sorted(path.parent.glob(path.name + "*"))}
    return {path.name: dir_size(path)}


def _time_searches(
    search: Any, texts: list[str], vectors: Vectors, k: int = 10, budget_s: float = 60.0, at_least: int = 20
) -> tuple[list[float], int]:
    """Time each search; stop early once ``budget_s`` is spent (after ``at_least`` searches)."""
    samples, returned = [], 0
    started = time.perf_counter()
    for text, vector in zip(texts, vectors, strict=True):
        began = time.perf_counter()
        returned += search(text, vector, k)
        samples.append(1000 * (time.perf_counter() - began))
        if len(samples) >= at_least and time.perf_counter() - started > budget_s:
            break
    return samples, returned


def run_worker(spec: dict[str, Any]) -> dict[str, Any]:
    out_path = Path(spec["out"])
    queries = facts.queries(spec["queries"])
    query_vectors = np.load(spec["query_vectors"])[: len(queries)]
    result: dict[str, Any] = {"store": spec["store"], "points": [], "skipped": []}
    with tempfile.TemporaryDirectory(dir=spec.get("tmp")) as tmp:
        store = make_store(spec["store"], Path(tmp), spec["model_id"])
        result["notes"] = store.notes
        result["rss_base_mb"] = round(_rss_mb(), 1)
        if hasattr(store, "prepare_queries"):
            store.prepare_queries(queries, query_vectors)
        done, began_all, rate = 0, time.perf_counter(), None
        for n in spec["points"]:
            if rate and (time.perf_counter() - began_all) + (n - done) / rate > spec["budget_s"]:
                result["skipped"].append({"n": n, "reason": f"predicted over the {spec['budget_s']} s budget"})
                continue
            began, cpu = time.perf_counter(), time.process_time()
            while done < n:
                size = min(INSERT_BATCH, n - done)
                texts = facts.facts(done, size)
                vectors = fact_vectors(done, size, spec["real_vectors"], Path(spec["fact_vectors"]))
                store.insert(done, texts, vectors)
                done += size
            insert_s, insert_cpu = time.perf_counter() - began, time.process_time() - cpu
            rate = (n - (result["points"][-1]["n"] if result["points"] else 0)) / max(insert_s, 1e-9)
            first, _ = _time_searches(store.search, queries[:1], query_vectors[:1])
            q = spec["queries"] if n < 1_000_000 else spec["queries"] // 2
            samples, returned = _time_searches(store.search, queries[:q], query_vectors[:q])
            q = len(samples)
            files = _store_files(store)
            point: dict[str, Any] = {
                "n": n,
                "insert_per_s": round(rate, 1),
                "insert_cpu_s": round(insert_cpu, 1),
                "insert_wall_s": round(insert_s, 1),
                "first_search_ms": round(first[0], 2),
                "search": {k: round(v, 3) for k, v in percentiles(samples).items()},
                "searches": q,
                "hits_per_search": round(returned / q, 2),
                "rss_mb": round(_rss_mb(), 1),
                "peak_rss_mb": round(_peak_rss_mb(), 1),
                "disk_bytes": sum(files.values()),
                "disk_files": files,
            }
            if hasattr(store, "search_unscoped"):
                unscoped, _ = _time_searches(store.search_unscoped, queries[:q], query_vectors[:q])
                point["search_unscoped"] = {k: round(v, 3) for k, v in percentiles(unscoped).items()}
            if hasattr(store, "reopen"):
                began = time.perf_counter()
                store.reopen()
                _time_searches(store.search, queries[:1], query_vectors[:1])
                point["reopen_first_search_ms"] = round(1000 * (time.perf_counter() - began), 1)
                point["rss_after_reopen_mb"] = round(_rss_mb(), 1)
            result["points"].append(point)
            out_path.write_text(json.dumps(result, indent=1))
        store.close()
    out_path.write_text(json.dumps(result, indent=1))
    return result


# --- the orchestrator -----------------------------------------------------------------------
def run_scale(
    stores: list[str],
    points: list[int],
    *,
    baseline_max_n: int,
    real_vectors: int,
    queries: int,
    budget_s: dict[str, float],
    model_id: str,
    query_vectors: Path = QUERY_VECTORS,
    workdir: Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    workdir = workdir or CACHE_DIR / "tmp"  # stores can be GBs: keep them off a small /tmp
    workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for name in tqdm(stores, desc="scale", disable=not progress):
            chosen = points if name == "memstrata" else [n for n in points if n <= baseline_max_n]
            spec = {
                "store": name,
                "points": chosen,
                "queries": queries,
                "real_vectors": real_vectors,
                "budget_s": budget_s.get(name, 600.0),
                "model_id": model_id,
                "out": str(Path(tmp) / f"{name}.json"),
                "tmp": tmp,
                "query_vectors": str(query_vectors),
                "fact_vectors": str(FACT_VECTORS),
            }
            spec_path = Path(tmp) / f"{name}-spec.json"
            spec_path.write_text(json.dumps(spec))
            began = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "bench", "scale-worker", str(spec_path)],
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
                env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
            )
            out = Path(spec["out"])
            results[name] = json.loads(out.read_text()) if out.exists() else {"store": name, "points": []}
            results[name]["wall_s"] = round(time.perf_counter() - began, 1)
            if proc.returncode != 0:
                results[name]["error"] = proc.stderr.strip().splitlines()[-5:]
    if real_vectors == 0:
        vector_note = "seeded random unit vectors (no model)"
    elif max(points) > real_vectors:
        vector_note = (
            f"USE vectors of the generated facts for the first {real_vectors:,}; seeded random unit vectors beyond"
        )
    else:
        vector_note = "USE vectors of the generated facts (computed once, cached)"
    return {"points": points, "queries": queries, "vectors": vector_note, "stores": results}
