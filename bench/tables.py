"""Markdown rendering of a result: the tables that go into the README, with the machine beside them."""

from __future__ import annotations

from typing import Any

from bench.machine import machine_line

LOCOMO_BM25_REFERENCE = {"recall@5": 0.328, "recall@10": 0.407, "recall@25": 0.515, "recall@50": 0.585}


def machine_caption(result: dict[str, Any]) -> str:
    return machine_line(result["machine"])


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"
        if isinstance(value, int):
            return f"{value:,}"
        return "–" if value is None else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _locomo(res: dict[str, Any]) -> list[str]:
    ks = (5, 10, 25, 50)
    out = [
        f"### LoCoMo ({res['questions']:,} questions, {res['conversations']} conversations, {res['turns']:,} turns)",
        "",
        f"Memory unit: {res['memory_unit']}. Evidence normalisation: {res['evidence_normalisation']}.",
        "",
        markdown_table(
            ["system", *[f"recall@{k}" for k in ks], "hit_any@10", "ndcg@10", "search ms"],
            [
                [
                    name,
                    *[r["overall"][f"recall@{k}"] for k in ks],
                    r["overall"]["hit_any@10"],
                    r["overall"]["ndcg@10"],
                    r["search_ms_mean"],
                ]
                for name, r in res["systems"].items()
            ],
        ),
        "",
        "Reference (data/README.md, plain BM25, whitespace tokens): "
        + ", ".join(f"{k} {v}" for k, v in LOCOMO_BM25_REFERENCE.items()),
        "",
        "Recall@k by category (number: name, questions):",
        "",
    ]
    rows = []
    for name, r in res["systems"].items():
        for cat, c in r["by_category"].items():
            if not c["n"]:
                continue
            rows.append([name, f"{cat}: {c['name']} ({c['n']})", *[c[f"recall@{k}"] for k in ks], c["ndcg@10"]])
    out += [markdown_table(["system", "category", *[f"recall@{k}" for k in ks], "ndcg@10"], rows), ""]
    return out


def _madial(res: dict[str, Any]) -> list[str]:
    ks = (1, 3, 5, 10, 20)
    header = ["system", *[f"recall@{k}" for k in ks], "ndcg@5", "ndcg@10", "ndcg_madial@10"]
    rows = [
        [
            name,
            *[r["overall"][f"recall@{k}"] for k in ks],
            r["overall"]["ndcg@5"],
            r["overall"]["ndcg@10"],
            r["overall"]["ndcg_madial@10"],
        ]
        for name, r in res["systems"].items()
    ]
    return [
        f"### MADial-Bench {res['dataset'].split('-')[-1]} ({res['queries']} dialogues, {res['memories']} memories)",
        "",
        f"Query: {res['query']}. Memory: {res['memory_unit']}.",
        "",
        markdown_table(header, rows),
        "",
    ]


def _longmemeval(res: dict[str, Any]) -> list[str]:
    out = [f"### LongMemEval format ({res['questions']} questions, {res['abstention_dropped']} abstention dropped)", ""]
    for granularity in ("session", "turn"):
        systems = res.get(f"{granularity}_granularity", {})
        for level in ("session", "turn"):
            names = [n for n, r in systems.items() if level in r]
            if not names:
                continue
            cols = [f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any") for k in (1, 5, 10, 50)]
            rows = [[n, *[systems[n][level].get(c) for c in cols]] for n in names]
            out += [
                f"{granularity}-level index, {level}-level metrics:",
                "",
                markdown_table(["system", *cols], rows),
                "",
            ]
    return out


def quality_markdown(quality: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if "locomo" in quality:
        out += _locomo(quality["locomo"])
    for key in ("madial-zh", "madial-en"):
        if key in quality:
            out += _madial(quality[key])
    if "longmemeval" in quality:
        out += _longmemeval(quality["longmemeval"])
    if "time-sensitive" in quality:
        from bench.lifecycle_bench import markdown as time_sensitive_markdown

        out.append(time_sensitive_markdown(quality["time-sensitive"]))
    if "graph" in quality:
        from bench.graph_bench import markdown as graph_markdown

        out.append(graph_markdown(quality["graph"]))
    if quality.get("skipped"):
        out += ["Skipped configurations:", ""] + [f"- `{k}`: {v}" for k, v in quality["skipped"].items()] + [""]
    return out


def _throughput(t: dict[str, Any]) -> list[str]:
    turns = t["real_turns"]
    rows = [
        [
            f"LoCoMo turns ({turns['turns']:,}, mean {turns['mean_chars']} chars, per session)",
            turns["raw_embed_per_s"],
            turns["add_per_s"],
            turns["add_vs_raw"],
            turns["store_only_add_per_s"],
        ],
    ] + [
        [
            f"short facts ({f['facts']:,}, batches of {f['batch']:,})",
            f["raw_embed_per_s"],
            f["add_per_s"],
            f["add_vs_raw"],
            f["store_only_add_per_s"],
        ]
        for f in t["short_facts"]
    ]
    q = t["query_embedding_ms"]
    return [
        f"### add(infer=False) throughput ({t['embedder']})",
        "",
        markdown_table(["input", "raw embedder /s", "memstrata add /s", "add / raw", "store only /s"], rows),
        "",
        f"One query embedding: p50 {q['p50_ms']:.2f} ms, p95 {q['p95_ms']:.2f} ms (not included in the scale "
        "latencies below, for any store).",
        "",
        "Goals: " + "; ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in t["goals"].items()),
        "",
    ]


def _scale(s: dict[str, Any]) -> list[str]:
    out = [f"### Search latency and footprint in one scope (k=10, {s['queries']} queries; vectors: {s['vectors']})", ""]
    rows = []
    for name, r in s["stores"].items():
        for p in r.get("points", []):
            rows.append(
                [
                    name,
                    p["n"],
                    p["insert_per_s"],
                    p["search"]["p50_ms"],
                    p["search"]["p95_ms"],
                    p["search"]["p99_ms"],
                    p.get("search_unscoped", {}).get("p95_ms"),
                    p["first_search_ms"],
                    p.get("reopen_first_search_ms"),
                    p["rss_mb"],
                    p["peak_rss_mb"],
                    round(p["disk_bytes"] / 2**20, 1),
                ]
            )
        for skip in r.get("skipped", []):
            rows.append([name, skip["n"], f"skipped: {skip['reason']}", *[None] * 9])
        if r.get("error"):
            rows.append([name, None, "error: " + " / ".join(r["error"])[-200:], *[None] * 9])
    header = [
        "store",
        "N",
        "insert /s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "p95 unscoped",
        "1st search ms",
        "reopen+1st ms",
        "RSS MB",
        "peak RSS MB",
        "disk MB",
    ]
    out += [markdown_table(header, rows), ""]
    fit_rows = [[n, *r.get("fit", {}).values()] for n, r in s["stores"].items() if r.get("fit")]
    if fit_rows:
        out += ["Growth with N (least squares over the points above):", ""]
        out += [
            markdown_table(["store", "p95 ~ N^x", "RSS bytes/memory", "RSS at N=0 MB", "disk bytes/memory"], fit_rows),
            "",
        ]
    ratio_rows = [
        [
            name,
            r["n"],
            r["search_p50_x_faster"],
            r["search_p95_x_faster"],
            r["insert_x_faster"],
            r["rss_ratio"],
            r["disk_ratio"],
        ]
        for name, rows_ in s.get("memstrata_vs", {}).items()
        for r in rows_
    ]
    if ratio_rows:
        out += ["memstrata against each store, same N, same vectors (>1 = memstrata faster / smaller ratio shown):", ""]
        out += [
            markdown_table(
                ["vs", "N", "p50 x faster", "p95 x faster", "insert x faster", "RSS ratio", "disk ratio"], ratio_rows
            ),
            "",
        ]
    for name, r in s["stores"].items():
        out.append(f"- `{name}`: {r.get('notes', '')}")
    return [*out, ""]


def _concurrency(c: dict[str, Any]) -> list[str]:
    rows = [[op, v["p50_ms"], v["p95_ms"], v["p99_ms"]] for op, v in c["latency_ms"].items()]
    return [
        f"### Concurrency: {c['processes']} processes x {c['ops_per_process']} mixed ops on one SQLite file",
        "",
        f"{c['ops_per_s']} ops/s overall, {c['errors']} errors {c['errors_by_type'] or ''}, live memories "
        f"{c['live_memories']:,} vs expected {c['expected_live_memories']:,} (difference {c['lost_or_extra_writes']}); "
        f"mix {c['mix']}; {c['vectors']}.",
        "",
        markdown_table(["operation", "p50 ms", "p95 ms", "p99 ms"], rows),
        "",
    ]


def markdown(result: dict[str, Any], suite: str) -> str:
    out = [f"## memstrata benchmarks: {suite}", "", f"Machine: {machine_caption(result)}.", ""]
    if result.get("load_average_end"):
        out += [f"Load average at the end: {result['load_average_end']} (other work shares this machine).", ""]
    if "quality" in result:
        out += quality_markdown(result["quality"])
    speed = result.get("speed", {})
    if "throughput" in speed:
        out += _throughput(speed["throughput"])
    if "scale" in speed:
        out += _scale(speed["scale"])
    if "concurrency" in speed:
        out += _concurrency(speed["concurrency"])
    if "write_path" in speed:
        from bench.write_path import markdown as write_path_markdown

        out.append(write_path_markdown(speed["write_path"]))
    return "\n".join(out) + "\n"
