"""Would capping the first ten hits per session, or per run of adjacent turns, help LoCoMo's multi-hop questions?

Multi-hop evidence spans two to three sessions, and the first ten hits often hold three or four adjacent turns of one
session (each turn is indexed with its neighbours). This ranks every LoCoMo question with memstrata's defaults to
depth 50 once, then reorders each list offline: a hit past the cap moves below the first ten. Recall@10 by category
is compared side by side with the uncapped list.

    python -m bench.session_caps [--out DIR]
"""

from __future__ import annotations

import argparse
import collections
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm import tqdm

from bench import metrics
from bench.datasets import LOCOMO_CATEGORIES, load_locomo
from bench.embedders import CachedEmbedder
from bench.machine import machine_facts, machine_line
from bench.quality import build_systems, locomo_docs
from bench.report import RESULTS_DIR, write_json_and_markdown
from bench.systems import MEMSTRATA_RECIPES

DEPTH = 50


def _session(dia_id: str) -> str:
    return dia_id.split(":")[0]


def _turn(dia_id: str) -> int:
    return int(dia_id.split(":")[1])


def per_session(ranked: Sequence[str], cap: int) -> list[str]:
    """At most ``cap`` hits of one session before the others; the rest keep their order after them."""
    kept: list[str] = []
    later: list[str] = []
    seen: collections.Counter[str] = collections.Counter()
    for dia_id in ranked:
        (kept if seen[_session(dia_id)] < cap else later).append(dia_id)
        seen[_session(dia_id)] += 1
    return kept + later


def per_run(ranked: Sequence[str], cap: int) -> list[str]:
    """At most ``cap`` adjacent turns of one session (a run) before the others."""
    kept: list[str] = []
    later: list[str] = []
    for dia_id in ranked:
        run, frontier = {dia_id}, [dia_id]
        while frontier:
            current = frontier.pop()
            for other in kept:
                near = _session(other) == _session(current) and abs(_turn(other) - _turn(current)) <= 1
                if near and other not in run:
                    run.add(other)
                    frontier.append(other)
        (later if len(run) > cap else kept).append(dia_id)
    return kept + later


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR)
    args = parser.parse_args()
    embedder = CachedEmbedder()
    questions, ranked = [], []
    with tempfile.TemporaryDirectory() as tmp:
        systems, _ = build_systems(embedder, Path(tmp), recipes=MEMSTRATA_RECIPES[:1], parts=False)
        system = next(s for s in systems if s.name == "memstrata-hybrid")
        conversations = load_locomo()
        for conversation in tqdm(conversations, desc="index"):
            system.index(conversation.sample_id, locomo_docs(conversation))
        for conversation in conversations:
            for question in tqdm(conversation.questions, desc=f"rank {conversation.sample_id}", leave=False):
                questions.append(question)
                ranked.append(system.search(conversation.sample_id, question.question.strip(), DEPTH))
    reorders: dict[str, Callable[[Sequence[str]], list[str]]] = {"no cap": list}
    for cap in (2, 3, 4, 5):
        reorders[f"at most {cap} per session"] = lambda top, cap=cap: per_session(top, cap)
    for cap in (1, 2, 3):
        reorders[f"runs of at most {cap} adjacent turns"] = lambda top, cap=cap: per_run(top, cap)
    rows = []
    for name, reorder in reorders.items():
        by_category: dict[int, list[float]] = collections.defaultdict(list)
        for question, top in zip(questions, ranked, strict=True):
            by_category[question.category].append(metrics.recall_at_k(question.evidence, reorder(top), 10))
        every = [value for values in by_category.values() for value in values]
        row = {"reorder": name, "recall@10": round(metrics.mean(every), 3)}
        row |= {LOCOMO_CATEGORIES[c]: round(metrics.mean(v), 3) for c, v in sorted(by_category.items())}
        rows.append(row)
    header = ["reorder", "recall@10", *(LOCOMO_CATEGORIES[c] for c in sorted(LOCOMO_CATEGORIES))]
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(str(row.get(column, "")) for column in header) + " |" for row in rows]
    title = "## LoCoMo recall@10 with the first ten capped per session or per run"
    machine = machine_facts()
    said = f"{len(questions)} questions, memstrata's defaults ranked to depth {DEPTH}."
    markdown = "\n".join([title, "", machine_line(machine), "", said, "", *table, ""])
    result = {"machine": machine, "rows": rows, "questions": len(questions), "depth": DEPTH}
    write_json_and_markdown(result, markdown, args.out, "session-caps")


if __name__ == "__main__":
    main()
