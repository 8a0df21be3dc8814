"""The LLM write path: add(infer=True) return latency, and the model's cost per turn by stage (extract, judge),
in calls, tokens and seconds, for one job per turn and for batched turns, on the same bilingual turns.

Uses the configured model the way `memstrata doctor` resolves it (the bundled local model here). The first
turn pays for loading the model and evaluating the two fixed system prompts; later turns reuse the cached
prompt prefix, so the per-turn numbers are reported with and without the first turn.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.progress import track

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.lexical import has_han
from memstrata.types import Job, JobStatus
from memstrata.write.smalltalk import is_small_talk

# A bilingual conversation with facts worth remembering, small talk between them, and later turns that
# change earlier facts (so the judge is asked too).
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
    "Actually I moved from Bangalore to Pune last week.",
    "我不再喝绿茶了，现在只喝白开水。",
]


def batch_results(jobs: list[Job]) -> list[dict[str, Any]]:
    """One result per model batch: the jobs run together share one result (calls and tokens of the batch),
    so summing over jobs would count a batch once per job."""
    unique = {json.dumps(job.result, sort_keys=True, default=str): job.result for job in jobs}
    return list(unique.values())


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _stage_totals(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = {}
    for result in results:
        for stage, row in result.get("stages", {}).items():
            into = totals.setdefault(stage, {})
            for key, value in row.items():
                into[key] = round(into.get(key, 0.0) + float(value), 3)
    return totals


# Idle speeds of the bundled model on this machine's two cores (DESIGN.md §4, measured when nothing else ran).
IDLE_PROMPT_TOKENS_PER_S = 45.0
IDLE_GENERATED_TOKENS_PER_S = 10.0


def _timings(memory: Memory) -> dict[str, float]:
    """llama.cpp's own token counts so far (the bundled model only; empty for a remote model)."""
    model = getattr(memory.extractor, "model", None)
    return dict(getattr(model, "timings", {}))


def _delta(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    return {key: after[key] - before.get(key, 0.0) for key in after}


def _per_turn(memory: Memory, turns: list[str]) -> dict[str, Any]:
    """One job per turn, processed at once (as a chat app with wait=True would): seconds and cost per turn.
    ``idle_estimate_s`` converts the tokens llama.cpp actually evaluated and generated for the turn at the idle
    speeds above: what the turn costs without the other processes of a shared machine."""
    rows = []
    for text in track(turns, description="write path, per turn"):
        before = _timings(memory)
        started = time.perf_counter()
        result = memory.add([{"role": "user", "content": text}], user_id="u1", session_id="s1", infer=True, wait=True)
        seconds = time.perf_counter() - started
        used = _delta(_timings(memory), before)
        job = next(j for j in memory.list_jobs(user_id="u1", limit=1000) if j.id == result.job_id)
        stages = job.result.get("stages", {})
        rows.append(
            {
                "turn": text,
                "language": "zh" if has_han(text) else "en",
                "small_talk": is_small_talk(text),
                "status": job.status.value,
                "seconds": round(seconds, 2),
                "model_calls": job.result.get("model_calls", 0),
                "extract_calls": stages.get("extract", {}).get("model_calls", 0),
                "judge_calls": stages.get("judge", {}).get("model_calls", 0),
                "prompt_tokens": job.result.get("prompt_tokens", 0),
                "completion_tokens": job.result.get("completion_tokens", 0),
                "facts": job.result.get("facts", 0),
                "decisions": [d["action"] for d in job.result.get("decisions", [])],
                "evaluated_prompt_tokens": used.get("prompt_n", 0),
                "cached_prompt_tokens": used.get("cache_n", 0),
                "generated_tokens": used.get("predicted_n", 0),
                "idle_estimate_s": round(
                    used.get("prompt_n", 0) / IDLE_PROMPT_TOKENS_PER_S
                    + used.get("predicted_n", 0) / IDLE_GENERATED_TOKENS_PER_S,
                    2,
                ),
                "model_ms": round(used.get("prompt_ms", 0) + used.get("predicted_ms", 0)),
            }
        )
    return {"turns": rows, **_summary(rows)}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    warm = rows[1:]  # the first turn loads the model and evaluates the system prompts once
    facts = [r for r in warm if not r["small_talk"]]
    nothing_similar = [r for r in facts if r["judge_calls"] == 0]

    def median(values: list[float]) -> float | None:
        return round(statistics.median(values), 2) if values else None

    generated = sum(r["generated_tokens"] for r in warm)
    generating_s = sum(r["model_ms"] for r in warm) / 1000
    return {
        "idle_estimate_median_s_per_fact_turn": median([r["idle_estimate_s"] for r in facts]),
        "measured_tokens_per_s": round(generated / generating_s, 2) if generating_s else None,
        "first_turn_s": rows[0]["seconds"] if rows else None,
        "median_s_per_turn": median([r["seconds"] for r in warm]),
        "median_s_per_fact_turn": median([r["seconds"] for r in facts]),
        "p90_s_per_fact_turn": round(_percentile([r["seconds"] for r in facts], 0.9), 2) if facts else None,
        "max_calls_nothing_similar": max((r["model_calls"] for r in nothing_similar), default=0),
        "model_calls_per_fact_turn": median([r["model_calls"] for r in facts]),
        "completion_tokens_per_fact_turn": median([r["completion_tokens"] for r in facts]),
        "prompt_tokens_per_fact_turn": median([r["prompt_tokens"] for r in facts]),
        "failed": sum(r["status"] != "done" for r in rows),
    }


def _batched(memory: Memory, turns: list[str], every_n: int) -> dict[str, Any]:
    add_ms = []
    for text in turns:  # the caller's view: store the turn, queue the job, return
        started = time.perf_counter()
        memory.add([{"role": "user", "content": text}], user_id="u2", session_id="s1", infer=True)
        add_ms.append((time.perf_counter() - started) * 1000)
    started = time.perf_counter()
    jobs = memory.flush(user_id="u2")
    wall_s = time.perf_counter() - started
    done = [job for job in jobs if job.status == JobStatus.DONE]
    batches = batch_results(done)
    return {
        "every_n": every_n,
        "turns": len(turns),
        "model_batches": len(batches),
        "failed_jobs": sum(job.status == JobStatus.FAILED for job in jobs),
        "add_ms_p50": round(statistics.median(add_ms), 2),
        "add_ms_p95": round(_percentile(add_ms, 0.95), 2),
        "extraction_s_per_turn": round(wall_s / len(turns), 2),
        "model_calls_per_turn": round(sum(int(r.get("model_calls", 0)) for r in batches) / len(turns), 2),
        "completion_tokens_per_turn": round(sum(int(r.get("completion_tokens", 0)) for r in batches) / len(turns), 1),
        "stages": _stage_totals(batches),
    }


def _settings(path: Path, threads: int, **write: Any) -> Any:
    return load_settings(
        {"store": {"path": str(path)}, "write": {"background": False, **write}, "llm": {"threads": threads}}
    )


def run_write_path(quick: bool, threads: int = 2) -> dict[str, Any]:
    """``threads=1`` on a busy machine (see bench/write_decisions.bundled_model)."""
    turns = TURNS[:8] if quick else TURNS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with Memory.from_config(_settings(root / "turn.db", threads, trigger="every_turn")) as memory:
            memory.add("warm-up", user_id="warm")  # the embedder is loaded before anything is timed
            per_turn = _per_turn(memory, turns)
            model = memory.extractor.name
        with Memory.from_config(_settings(root / "batch.db", threads, trigger="every_n", every_n=4)) as memory:
            memory.add("warm-up", user_id="warm")
            batched = _batched(memory, turns, 4)
    return {"model": model, "threads": threads, "per_turn": per_turn, "batched": batched}


def markdown(result: dict[str, Any]) -> str:
    if "per_turn" not in result:  # an older result file, before per-turn stages were measured
        return "### LLM write path\n\n(older result format; see the JSON)\n"
    t, b = result["per_turn"], result["batched"]
    rows = [
        f"### LLM write path ({result['model']}, {result.get('threads', 2)} threads)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| first turn (model load + system prompts), s | {t['first_turn_s']} |",
        f"| median s per turn (after the first, small talk included) | {t['median_s_per_turn']} |",
        f"| median s per fact-bearing turn (measured, shared machine) | {t['median_s_per_fact_turn']} |",
        f"| median s per fact-bearing turn (idle estimate from tokens) | {t['idle_estimate_median_s_per_fact_turn']} |",
        f"| p90 s per fact-bearing turn | {t['p90_s_per_fact_turn']} |",
        f"| model calls per fact-bearing turn (median) | {t['model_calls_per_fact_turn']} |",
        f"| most calls for a turn with nothing similar stored | {t['max_calls_nothing_similar']} |",
        f"| prompt / completion tokens per fact-bearing turn (median) | {t['prompt_tokens_per_fact_turn']} / "
        f"{t['completion_tokens_per_fact_turn']} |",
        f"| batched every {b['every_n']}: s per turn, calls per turn | {b['extraction_s_per_turn']}, "
        f"{b['model_calls_per_turn']} |",
        f"| add(infer=True) return p50 / p95 ms | {b['add_ms_p50']} / {b['add_ms_p95']} |",
        "",
        "| turn | s | idle est. s | extract calls | judge calls | evaluated / cached prompt tok | generated tok "
        "| decisions |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in t["turns"]:
        rows.append(
            f"| {row['turn'][:48]} | {row['seconds']} | {row['idle_estimate_s']} | {row['extract_calls']} | "
            f"{row['judge_calls']} | {row['evaluated_prompt_tokens']:.0f} / {row['cached_prompt_tokens']:.0f} | "
            f"{row['generated_tokens']:.0f} | {' '.join(row['decisions'])} |"
        )
    return "\n".join(rows) + "\n"


def main() -> None:
    """``python -m bench.write_path [--quick] [--threads N]``: writes bench/results/<date>-write-path.{json,md}."""
    import sys

    from bench.machine import machine_facts
    from bench.report import RESULTS_DIR, stamp

    machine = machine_facts()
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 2
    result = {"machine": machine, **run_write_path("--quick" in sys.argv, threads)}
    result["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    base = RESULTS_DIR / f"{stamp()}-write-path"
    base.with_suffix(".json").write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str))
    base.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
