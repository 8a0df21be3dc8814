"""Search latency, RSS and size on disk as one scope grows: 1k, 10k, 100k, 1M memories.

Each store runs in its own process (``python -m bench scale-worker SPEC``) so its RSS is its own.
All stores get the same generated facts and the same precomputed vectors: real USE vectors for
the first ``real_vectors`` facts (computed once, cached under ``bench/.cache``), seeded synthetic
vectors beyond that: clustered (unit vectors around 2,000 seeded centres, as real embeddings cluster by
topic), because embedding a million texts with USE takes hours here. Query vectors are real USE vectors.

At each size a worker times: the first search after the inserts (and, for memstrata, the wait for its
vector graph, ``index_ready_s``), searches in the scope, with a metadata filter (a tenth of the rows), the
store's vector search alone (memstrata), the same searches while a CPU hog the bench starts keeps every core
busy (``--loaded``), recall@10 of the vector search against an exact scan (streamed, so the truth costs no
memory), and a reopen with its first search. ``python -m bench.scale`` runs the suite on its own and writes
JSON and Markdown to bench/results/.
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
from bench.baselines.stores import MemstrataStore, dir_size, make_store
from bench.datasets import REPO_ROOT
from bench.embedders import CACHE_DIR, DIMS, CachedEmbedder, Vectors
from bench.machine import machine_line
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


CENTRES = 2_000


def clustered_unit_vectors(start: int, count: int, dims: int = DIMS, seed: int = 20261201) -> Vectors:
    """Rows [start, start + count): unit vectors near one of ``CENTRES`` seeded centres each, stable across calls.
    The noise is sized so a row's cosine to its centre is about 0.6, like USE vectors of texts on one topic."""
    centres = np.random.default_rng(seed).standard_normal((CENTRES, dims), dtype=np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    out = np.empty((count, dims), dtype=np.float32)
    block = 10_000
    for first in range(start - start % block, start + count, block):
        rng = np.random.default_rng([seed, first // block])
        rows = centres[rng.integers(0, CENTRES, block)] + rng.standard_normal((block, dims), dtype=np.float32) * (
            1.33 / np.sqrt(dims)
        )
        lo, hi = max(first, start), min(first + block, start + count)
        if lo < hi:
            out[lo - start : hi - start] = rows[lo - first : hi - first]
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def fact_vectors(start: int, count: int, real: int, path: Path = FACT_VECTORS) -> Vectors:
    """Rows [start, start+count): cached USE vectors below ``real``, clustered synthetic vectors above."""
    out = np.empty((count, DIMS), dtype=np.float32)
    n_real = max(0, min(start + count, real) - start)
    if n_real:
        out[:n_real] = np.fromfile(path, dtype=np.float32, count=n_real * DIMS, offset=start * DIMS * 4).reshape(
            n_real, DIMS
        )
    if n_real < count:
        out[n_real:] = clustered_unit_vectors(start + n_real, count - n_real)
    return out


def ensure_query_vectors(count: int, embedder: Any, path: Path = QUERY_VECTORS) -> Path:
    """USE vectors of the query set (any embedder in tests), saved where the workers read them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, embedder.embed_batch(facts.queries(count)))
    return path


# --- the worker (one store, one process) ----------------------------------------------------
def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def proc_status_mb(*names: str) -> dict[str, float]:
    """Memory fields of /proc/self/status (VmRSS, RssAnon, VmHWM, ...) in MB; empty where there is no /proc."""
    status = Path("/proc/self/status")
    if not status.exists():
        return {}
    fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
    return {name: round(int(fields[name].split()[0]) / 1024, 1) for name in names if name in fields}


def _peak_rss_mb() -> float:
    """VmHWM of this process (getrusage's maxrss survives exec, so it would report the parent's)."""
    peak = proc_status_mb("VmHWM").get("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


def _timed(search: Any, queries: list[str], vectors: Vectors, q: int) -> dict[str, float]:
    samples, _ = _time_searches(search, queries[:q], vectors[:q])
    return {k: round(v, 3) for k, v in percentiles(samples).items()}


def exact_truth(query_vectors: Vectors, n: int, real: int, path: Path, k: int = 10) -> list[list[int]]:
    """Rows of the ``k`` best matches per query among rows [0, n), by exact cosine, streamed in blocks."""
    best = np.full((len(query_vectors), 0), -np.inf, dtype=np.float32), np.zeros((len(query_vectors), 0), np.int64)
    scores_all, rows_all = best
    for start in range(0, n, INSERT_BATCH):
        block = fact_vectors(start, min(INSERT_BATCH, n - start), real, path)
        scores = (query_vectors @ block.T) / np.linalg.norm(block, axis=1)
        scores_all = np.concatenate([scores_all, scores], axis=1)
        rows_all = np.concatenate(
            [rows_all, np.broadcast_to(np.arange(start, start + block.shape[0]), scores.shape)], 1
        )
        keep = np.argsort(-scores_all, axis=1)[:, :k]
        scores_all, rows_all = np.take_along_axis(scores_all, keep, 1), np.take_along_axis(rows_all, keep, 1)
    return [list(map(int, row)) for row in rows_all]


class CpuHog:
    """Busy loops on every core, started and stopped by the bench: the "loaded machine" of the issue."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> CpuHog:
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
        time.sleep(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()


def _measure(store: Any, spec: dict[str, Any], queries: list[str], query_vectors: Vectors, n: int) -> dict[str, Any]:
    q = spec["queries"] if n < 1_000_000 else spec["queries"] // 2
    point: dict[str, Any] = {}
    for name in ("search_filtered", "search_dense", "search_unscoped"):
        if hasattr(store, name):
            point[name] = _timed(getattr(store, name), queries, query_vectors, q)
    if spec.get("loaded"):
        with CpuHog():
            point["search_loaded"] = _timed(store.search, queries, query_vectors, max(20, q // 2))
            if hasattr(store, "search_dense"):
                point["search_dense_loaded"] = _timed(store.search_dense, queries, query_vectors, max(20, q // 2))
    if hasattr(store, "dense_rows") and n <= spec.get("recall_max_n", 0):
        r = min(30, len(query_vectors))
        truth = exact_truth(query_vectors[:r], n, spec["real_vectors"], Path(spec["fact_vectors"]))
        found = [store.dense_rows(v, 10) for v in query_vectors[:r]]
        point["recall_at_10"] = round(
            sum(len(set(t) & set(f)) for t, f in zip(truth, found, strict=True)) / (10 * r), 4
        )
    return point


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
                (store.bulk_insert if spec.get("bulk") and hasattr(store, "bulk_insert") else store.insert)(
                    done, texts, vectors
                )
                done += size
            insert_s, insert_cpu = time.perf_counter() - began, time.process_time() - cpu
            rate = (n - (result["points"][-1]["n"] if result["points"] else 0)) / max(insert_s, 1e-9)
            first, _ = _time_searches(store.search, queries[:1], query_vectors[:1])
            ready_s = None
            if hasattr(store, "ready"):  # memstrata: its vector graph, built in the background after the inserts
                began = time.perf_counter()
                store.ready()
                ready_s = round(time.perf_counter() - began, 1)
            q = spec["queries"] if n < 1_000_000 else spec["queries"] // 2
            samples, returned = _time_searches(store.search, queries[:q], query_vectors[:q])
            q = len(samples)
            point: dict[str, Any] = {
                "n": n,
                "insert_per_s": round(rate, 1),
                "insert_cpu_s": round(insert_cpu, 1),
                "insert_wall_s": round(insert_s, 1),
                "first_search_ms": round(first[0], 2),
                "index_ready_s": ready_s,
                "search": {k: round(v, 3) for k, v in percentiles(samples).items()},
                "searches": q,
                "hits_per_search": round(returned / q, 2),
                "rss_mb": round(_rss_mb(), 1),
                "peak_rss_mb": round(_peak_rss_mb(), 1),
            }
            files = _store_files(store)
            point["disk_bytes"], point["disk_files"] = sum(files.values()), files
            point["load_average"] = [round(x, 2) for x in os.getloadavg()]
            point.update(_measure(store, spec, queries, query_vectors, n))
            if hasattr(store, "reopen"):  # a new process's cold open: close, open, first search
                began = time.perf_counter()
                store.reopen()
                _time_searches(store.search, queries[:1], query_vectors[:1])
                point["reopen_first_search_ms"] = round(1000 * (time.perf_counter() - began), 1)
                point["rss_after_reopen_mb"] = round(_rss_mb(), 1)
            if isinstance(store, MemstrataStore):
                point["fresh_process"] = _fresh_process(store, spec, q)
            result["points"].append(point)
            out_path.write_text(json.dumps(result, indent=1))
        store.close()
    out_path.write_text(json.dumps(result, indent=1))
    return result


def _fresh_process(store: MemstrataStore, spec: dict[str, Any], queries: int) -> dict[str, Any]:
    """bench/scale_fresh.py on this store in a new process, this one idle meanwhile (its index builds done)."""
    store.ready()
    child_spec = Path(spec["tmp"]) / f"{spec['store']}-fresh.json"
    child_spec.write_text(json.dumps({"workdir": str(store.path.parent), "model_id": spec["model_id"],
                                      "keyword_cache": store.keyword_cache, "queries": queries,
                                      "query_vectors": spec["query_vectors"]}))  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "bench.scale_fresh", str(child_spec)], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-3:]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
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
    loaded: bool = False,
    recall_max_n: int = 0,
    bulk: bool = False,
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
                "loaded": loaded,
                "recall_max_n": recall_max_n,
                "bulk": bulk,
            }
            spec_path = Path(tmp) / f"{name}-spec.json"
            spec_path.write_text(json.dumps(spec))
            began = time.perf_counter()
            pythonpath = os.environ.get("PYTHONPATH", "")
            proc = subprocess.run(
                [sys.executable, "-m", "bench", "scale-worker", str(spec_path)],
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
                # This tree's sources first, so a worker measures the memstrata beside it, not an installed one.
                env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), str(REPO_ROOT / "src"), pythonpath])},
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
            f"USE vectors of the generated facts for the first {real_vectors:,}; seeded clustered synthetic vectors "
            "beyond"
        )
    else:
        vector_note = "USE vectors of the generated facts (computed once, cached)"
    return {"points": points, "queries": queries, "vectors": vector_note, "stores": results}


# --- on its own: python -m bench.scale ------------------------------------------------------------
def _row(name: str, p: dict[str, Any]) -> list[Any]:
    def p95(key: str) -> Any:
        return p.get(key, {}).get("p95_ms")

    loaded = p.get("search_loaded", {}).get("p95_ms")
    return [
        name, f"{p['n']:,}", p["search"]["p50_ms"], p["search"]["p95_ms"], p95("search_filtered"), p95("search_dense"),
        p95("search_unscoped"), loaded, round(loaded / p["search"]["p95_ms"], 2) if loaded else None,
        p.get("recall_at_10"), p["first_search_ms"], p.get("index_ready_s"), p.get("reopen_first_search_ms"),
        p["rss_mb"], p["peak_rss_mb"], round(p["disk_bytes"] / p["n"]), f"{p['insert_per_s']:,.0f}",
    ]  # fmt: skip


def render(result: dict[str, Any]) -> str:
    header = ["store", "N", "p50 ms", "p95 ms", "p95 filtered", "p95 vector only", "p95 unscoped", "p95 loaded",
              "loaded/idle", "recall@10", "1st search ms", "graph ready s", "reopen+1st ms", "RSS MB", "peak RSS MB",
              "disk B/memory", "insert /s"]  # fmt: skip
    lines = [
        "## memstrata at scale: search in one scope, with filters, under load, and cold",
        "",
        f"Machine: {machine_line(result['machine'])}. Load average at start {result['load_start']}, "
        f"end {result['load_end']} (other work shares this 2-core machine: no run here is idle).",
        "",
        f"k=10, {result['scale']['queries']} queries per point (half at 1M). Vectors: {result['scale']['vectors']}. "
        "`p95 filtered`: scope plus a metadata filter matching a tenth of the rows. `p95 vector only`: memstrata's "
        "store.vector_search, without keyword search, fusion and hydration (what the other stores do). "
        "`p95 loaded`: the same searches while the bench keeps every core busy with a CPU hog. "
        "`recall@10`: memstrata's vector search against an exact scan of the same vectors. `graph ready s`: the "
        "wait for memstrata's HNSW graph after the inserts (built in the background; searches meanwhile are exact). "
        "`reopen+1st`: close, open again (the persisted index), first search; the page cache is warm.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for name, res in result["scale"]["stores"].items():
        for p in res.get("points", []):
            lines.append("| " + " | ".join("–" if v is None else str(v) for v in _row(name, p)) + " |")
        for skip in res.get("skipped", []):
            lines.append(f"| {name} | {skip['n']:,} | skipped: {skip['reason']} |" + " |" * (len(header) - 3))
        if res.get("error"):
            lines.append(f"| {name} | error: {' / '.join(res['error'])[-300:]} |" + " |" * (len(header) - 2))
    lines += ["", *(f"- `{n}`: {r.get('notes', '')}" for n, r in result["scale"]["stores"].items())]
    return "\n".join(lines + _fresh_table(result)) + "\n"


def _fresh_table(result: dict[str, Any]) -> list[str]:
    """The same stores opened by a new process (bench/scale_fresh.py): a restarted service."""
    rows = [(name, p["n"], p["fresh_process"]) for name, res in result["scale"]["stores"].items()
            for p in res.get("points", []) if "fresh_process" in p]  # fmt: skip
    if not rows:
        return []
    lines = ["", "### A new process on the same store (a restarted service)", "",
             "Open + first search while the keyword copy builds (FTS5 answers), then the searches once both indexes "
             "are ready; RSS of that process, which holds nothing left over from the inserts, split into anonymous "
             "memory and pages of the memory-mapped index files (clean, reclaimable by the kernel).", "",
             "| store | N | open+1st ms | indexes ready s | p50 ms | p95 ms | RSS MB | of it anonymous | of it mapped "
             "files | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, n, fresh in rows:
        if "error" in fresh:
            lines.append(f"| {name} | {n:,} | error: {' / '.join(fresh['error'])[-200:]} | | | | | | | |")
            continue
        lines.append(f"| {name} | {n:,} | {fresh['open_first_search_ms']} | {fresh['indexes_ready_s']} | "
                     f"{fresh['search']['p50_ms']} | {fresh['search']['p95_ms']} | {fresh['rss_mb']} | "
                     f"{fresh.get('rss_anon_mb')} | {fresh.get('rss_file_mb')} | {fresh['peak_rss_mb']} |")  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    import argparse
    from datetime import UTC, datetime

    from bench.machine import machine_facts

    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--stores", default="memstrata,chromadb,qdrant-local,lancedb,raw-numpy,raw-usearch")
    parser.add_argument("--points", default="10000,100000,1000000")
    parser.add_argument("--baseline-max-n", type=int, default=100_000)
    parser.add_argument("--real-vectors", type=int, default=20_000, help="USE vectors for the first N facts")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--recall-max-n", type=int, default=1_000_000)
    parser.add_argument("--no-load", action="store_true", help="skip the runs under a CPU hog")
    parser.add_argument("--bulk", action="store_true", help="memstrata: insert through store.write, not Memory.add")
    parser.add_argument("--budget-s", type=float, default=3600.0, help="per store")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--suffix", default="", help="added to the result file names")
    args = parser.parse_args(argv)
    points = [int(x) for x in args.points.split(",")]
    embedder = CachedEmbedder()
    real = min(args.real_vectors, max(points))
    ensure_fact_vectors(real, embedder)
    query_vectors = ensure_query_vectors(args.queries, embedder)
    load_start = [round(x, 2) for x in os.getloadavg()]
    stores = args.stores.split(",")
    scale = run_scale(stores, points, baseline_max_n=args.baseline_max_n, real_vectors=real, queries=args.queries,
                      budget_s=dict.fromkeys(stores, args.budget_s), model_id=embedder.model_id,
                      query_vectors=query_vectors, loaded=not args.no_load, recall_max_n=args.recall_max_n,
                      bulk=args.bulk)  # fmt: skip
    result = {"machine": machine_facts(), "load_start": load_start, "load_end": [round(x, 2) for x in os.getloadavg()],
              "scale": scale}  # fmt: skip
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    args.out.mkdir(parents=True, exist_ok=True)
    name = f"{stamp}-scale{args.suffix}"
    (args.out / f"{name}.json").write_text(json.dumps(result, indent=1))
    (args.out / f"{name}.md").write_text(render(result))
    print(args.out / f"{name}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
