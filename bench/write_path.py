"""The LLM write path: add(infer=True) return latency, extraction cost per job and per turn, and the
batched design against the naive one-model-call-per-turn design, in one run on the same turns.

Uses the configured model the way `memstrata doctor` resolves it (the bundled local model here).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.types import Job, JobStatus

# A bilingual conversation with facts worth remembering and small talk between them.
TURNS = [
    "Hi! I'm Priya, I work as a data engineer in Bangalore.",
    "今天天气真不错。",
    "我下个月要去上海出差，住在静安区。",
    "I'm allergic to shellfish, please keep that in mind for restaurant tips.",
    "How are you doing today?",
    "我女儿叫安安，今年五岁，在学钢琴。",
    "I switched from coffee to green tea last month.",
    "我们团队正在把数据仓库从 Hive 迁移到 Iceberg。",
    "Lol that's funny.",
    "My manager is Tom, he prefers short status updates on Fridays.",
    "我周末喜欢去爬山，最近去了莫干山。",
    "I'm training for a half marathon in October.",
    "好的，谢谢！",
    "我不吃香菜。",
    "Remember that my laptop is a ThinkPad X1 with 32 GB of RAM.",
    "我打算明年考 AWS 的认证。",
]


def batch_results(jobs: list[Job]) -> list[dict[str, Any]]:
    """One result per model batch: the jobs run together share one result (calls and tokens of the batch),
    so summing over jobs would count a batch once per job."""
    unique = {json.dumps(job.result, sort_keys=True, default=str): job.result for job in jobs}
    return list(unique.values())


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _run(design: str, turns: list[str], write: dict[str, Any], root: Path) -> dict[str, Any]:
    path = root / f"{design}.db"
    settings = load_settings({"store": {"path": str(path)}, "write": {"background": False, **write}})
    with Memory.from_config(settings) as memory:
        memory.add("warm-up", user_id="warm", infer=False)  # embedder loaded before timing
        add_ms = []
        for text in turns:  # the caller's view: store the turn, queue the job, return
            started = time.perf_counter()
            memory.add([{"role": "user", "content": text}], user_id="u1", session_id="s1", infer=True)
            add_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        jobs = memory.flush()
        wall_s = time.perf_counter() - started
        done = [job for job in jobs if job.status == JobStatus.DONE and job.scope.user_id == "u1"]
        failed = [job for job in jobs if job.status == JobStatus.FAILED]
        batches = batch_results(done)
        calls = sum(int(result.get("model_calls", 0)) for result in batches)
        prompt = sum(int(result.get("prompt_tokens", 0)) for result in batches)
        completion = sum(int(result.get("completion_tokens", 0)) for result in batches)
        job_seconds = [float(result.get("seconds", 0.0)) for result in batches]
        facts = memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"]}, limit=1000)
        return {
            "design": design,
            "model": memory.extractor.name,
            "turns": len(turns),
            "jobs": len(done),
            "model_batches": len(batches),
            "failed_jobs": len(failed),
            "add_ms_p50": statistics.median(add_ms),
            "add_ms_p95": _percentile(add_ms, 0.95),
            "extraction_s_total": wall_s,
            "extraction_s_per_job_median": statistics.median(job_seconds) if job_seconds else None,
            "extraction_s_per_turn": wall_s / len(turns),
            "model_calls_per_turn": calls / len(turns),
            "prompt_tokens_per_turn": prompt / len(turns),
            "completion_tokens_per_turn": completion / len(turns),
            "facts_stored": len(facts),
            "sample_facts": [item.text for item in facts[:8]],
        }


def run_write_path(quick: bool) -> dict[str, Any]:
    turns = TURNS[:6] if quick else TURNS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        batched = _run("batched (8 turns per call)", turns, {"trigger": "every_n", "every_n": 8}, root)
        naive = _run("naive (one call per turn)", turns, {"trigger": "every_turn", "batch_jobs": 1}, root)
    ratios = {
        "model_calls_per_turn (naive / batched)": _ratio(
            naive["model_calls_per_turn"], batched["model_calls_per_turn"]
        ),
        "seconds_per_turn (naive / batched)": _ratio(naive["extraction_s_per_turn"], batched["extraction_s_per_turn"]),
        "prompt_tokens_per_turn (naive / batched)": _ratio(
            naive["prompt_tokens_per_turn"], batched["prompt_tokens_per_turn"]
        ),
    }
    return {"designs": [batched, naive], "ratios": ratios}


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def markdown(result: dict[str, Any]) -> str:
    rows = [
        "| design | turns | jobs | add p50 ms | add p95 ms | extraction s/turn | s/job (median) | model calls/turn "
        "| prompt tok/turn | completion tok/turn | facts |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for d in result["designs"]:
        per_job = d["extraction_s_per_job_median"]
        rows.append(
            f"| {d['design']} | {d['turns']} | {d['jobs']} | {d['add_ms_p50']:.1f} | {d['add_ms_p95']:.1f} | "
            f"{d['extraction_s_per_turn']:.2f} | {per_job if per_job is None else round(per_job, 2)} | "
            f"{d['model_calls_per_turn']:.2f} | {d['prompt_tokens_per_turn']:.0f} | "
            f"{d['completion_tokens_per_turn']:.0f} | {d['facts_stored']} |"
        )
    rows.append("")
    rows += [f"- {name}: **{value}x**" for name, value in result["ratios"].items()]
    model = result["designs"][0]["model"]
    return f"### LLM write path ({model})\n\n" + "\n".join(rows) + "\n"
