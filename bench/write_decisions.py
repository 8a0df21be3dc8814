"""The labelled write-path decision set with a real model (default: the bundled Qwen2.5-Coder-1.5B): how many
scenarios end with the right memories, per class, and how many unrelated facts were closed (must be 0).

    python -m bench.write_decisions                      # all scenarios, bundled model
    python -m bench.write_decisions --ids keep-zh-trip-sister,end-en-car

Writes bench/results/<date>-write-decisions.{json,md}: per-class pass rates, every failure with the memories
that were left, model calls and tokens per step, seconds per step (median; the machine's load is recorded,
a shared machine runs the model several times slower).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from rich.progress import track

from bench.machine import machine_facts
from bench.report import RESULTS_DIR, stamp
from bench.write_scenarios import Outcome, Scenario, load_decision_set, run_scenario, summarise
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.llm import ChatModel
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.testing import ManualClock
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler


def bundled_model(threads: int = 2) -> ChatModel:
    """On a machine other processes keep busy, ``threads=1`` is several times faster: llama.cpp's threads wait
    for each other at every step, and a descheduled one stalls the rest (measured at load ~13 on 2 cores:
    1.2 generated tokens/s with one thread, 0.1-0.3 with two)."""
    from memstrata.providers.local_llm import assemble_gguf, default_cache_dir, shared_local_model

    model = shared_local_model(assemble_gguf(default_cache_dir(os.environ)), threads=threads)
    model.load()
    return model


def run_decisions(
    model: ChatModel,
    scenarios: Sequence[Scenario],
    root: Path,
    *,
    progress: bool = True,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Each scenario on its own store (nothing leaks between them), one embedder and one model for all."""
    data = load_decision_set()
    embedder = UniversalSentenceEncoder(threads=1)
    outcomes = []
    for scenario in track(scenarios, description="write decisions", disable=not progress):
        path = root / f"{scenario.id}.db"
        clock = ManualClock(data.base - timedelta(days=60))
        settings = load_settings({"store": {"path": str(path)}, "write": {"background": False}})
        with Memory(SQLiteStore(path), embedder, settings=settings, clock=clock, extractor=LLMExtractor(model),
                    reconciler=LLMReconciler(model)) as memory:  # fmt: skip
            outcomes.append(run_scenario(memory, clock, data, scenario, user_id="u1"))
        if on_outcome is not None:
            on_outcome(outcomes[-1])
    return outcomes


def report(outcomes: Sequence[Outcome], model_id: str, wall_s: float) -> dict[str, Any]:
    steps = [s for o in outcomes for s in o.seconds_per_step]
    step_count = max(len(steps), 1)
    return {
        "model": model_id,
        "summary": summarise(list(outcomes)),
        "seconds_per_step_median": round(statistics.median(steps), 2) if steps else None,
        "seconds_per_step_p90": round(sorted(steps)[int(0.9 * (len(steps) - 1))], 2) if steps else None,
        "model_calls_per_step": round(sum(o.model_calls for o in outcomes) / step_count, 2),
        "prompt_tokens_per_step": round(sum(o.prompt_tokens for o in outcomes) / step_count, 1),
        "completion_tokens_per_step": round(sum(o.completion_tokens for o in outcomes) / step_count, 1),
        "wall_s": round(wall_s, 1),
        "failures": [
            {"id": o.id, "class": o.class_, "why": o.failures, "memories": o.memories} for o in outcomes if not o.passed
        ],
        "scenarios": [_row(o) for o in outcomes],
    }


def _row(outcome: Outcome) -> dict[str, Any]:
    return {
        "id": outcome.id,
        "class": outcome.class_,
        "passed": outcome.passed,
        "model_calls": outcome.model_calls,
        "seconds_per_step": [round(s, 2) for s in outcome.seconds_per_step],
        "rejected": outcome.rejected,
    }


def markdown(result: dict[str, Any]) -> str:
    summary = result["summary"]
    rows = [
        f"### Write-path decision set ({result['model']})",
        "",
        f"**{summary['passed']} / {summary['scenarios']} scenarios pass ({summary['pass_rate']:.1%})**; "
        f"unrelated facts closed: **{summary['unrelated_closed']}**; failed jobs: {summary['failed_jobs']}; "
        f"model proposals refused by the engine: {summary['rejected_proposals']}.",
        "",
        "| class | scenarios | passed | pass rate | unrelated closed |",
        "|---|---|---|---|---|",
    ]
    for name, row in summary["by_class"].items():
        rows.append(f"| {name} | {row['scenarios']} | {row['passed']} | {row['pass_rate']:.0%} | {row['damaged']} |")
    rows += [
        "",
        f"Per step (one `add(infer=True, wait=True)`): median {result['seconds_per_step_median']} s, "
        f"p90 {result['seconds_per_step_p90']} s; {result['model_calls_per_step']} model calls, "
        f"{result['prompt_tokens_per_step']} prompt and {result['completion_tokens_per_step']} completion tokens.",
        "",
    ]
    if result["failures"]:
        rows += ["Failures:", ""]
        for failure in result["failures"]:
            rows.append(f"- `{failure['id']}` ({failure['class']}): {'; '.join(failure['why'])}")
            rows.append(f"  - active: {failure['memories'].get('active')}; closed: {failure['memories'].get('closed')}")
    return "\n".join(rows) + "\n"


def _logger(path: Path | None) -> Callable[[Outcome], None] | None:
    if path is None:
        return None

    def log(outcome: Outcome) -> None:
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({**_row(outcome), "why": outcome.failures, "memories": outcome.memories},
                                 ensure_ascii=False) + "\n")  # fmt: skip

    return log


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", default=None, help="comma-separated scenario ids (default: all)")
    parser.add_argument("--classes", default=None, help="comma-separated classes, run in this order (default: all)")
    parser.add_argument("--threads", type=int, default=2, help="model threads (1 on a busy machine)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    parser.add_argument("--log", type=Path, default=None, help="append each scenario's outcome to this JSONL file")
    args = parser.parse_args(argv)
    scenarios = load_decision_set().scenarios
    if args.ids:
        wanted = set(args.ids.split(","))
        scenarios = [s for s in scenarios if s.id in wanted]
    if args.classes:  # in the order given
        classes = args.classes.split(",")
        scenarios = sorted((s for s in scenarios if s.class_ in classes), key=lambda s: classes.index(s.class_))
    started = time.perf_counter()
    machine = machine_facts()
    model = bundled_model(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = run_decisions(model, scenarios, Path(tmp), on_outcome=_logger(args.log))
    result = {
        "machine": machine,
        "threads": args.threads,
        **report(outcomes, model.model_id, time.perf_counter() - started),
    }
    result["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    args.out.mkdir(parents=True, exist_ok=True)
    base = args.out / f"{stamp()}-write-decisions"
    base.with_suffix(".json").write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str))
    base.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))
    print(base.with_suffix(".json"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
