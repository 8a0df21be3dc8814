"""When is a recorded step "the same step" as another (planned, or just failed)? Same action type, and
similar input and intent. Similarity is judged twice:

1. the read path finds the recorded step units of that action most like the text (cosine, through the
   store's vector index, with the action as a metadata filter), down to ``PRE_FILTER`` below the threshold;
2. each of the closest few is compared again on its *input* without the words both inputs share that name
   the task's topic (the words of the recorded task's goal, and of the planning task's when there is one;
   the intent took part in the first look). Short step texts are dominated by the thing they act on:
   "restart the export job" and "disable retries in the export job" are 0.78 alike, though they do
   different things to it; without "export job" the difference shows, while "rerun the flaky checkout
   test many times" still meets "rerun the checkout test 50 times" on "rerun ... times". Across languages
   no words are shared and the whole inputs are compared again. The score is the mean of the two looks.

Measured on a generated set of 210 tasks (bench/process_bench.py, results in bench/results/*process*): at the
default threshold 0.55 (the best F1 in both groups), dead-end precision 0.83 / recall 0.85 with the plan in
the tasks' language (F1 0.84) and 0.81 / 0.83 with the plan in the other one (F1 0.82). Cosine alone peaks
at F1 0.82 in one language (threshold 0.65-0.7) and 0.78 across languages (0.65).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memstrata.lexical import keyword_tokens
from memstrata.process.deps import ProcessDeps
from memstrata.query import Filters, SearchQuery
from memstrata.records.process import STEP_KIND, Step
from memstrata.types import MemoryStatus, Scope

PRE_FILTER = 0.2
CLOSER_LOOK = 10


def similar_units(deps: ProcessDeps, scope: Scope, action: str, text: str) -> list[tuple[str, float]]:
    """(step id, cosine) of recorded steps of ``action`` like ``text``, active or archived, most similar first."""
    floor = max(0.0, deps.settings.dead_end_similarity - PRE_FILTER)
    query = SearchQuery(
        scope=scope, text=text, limit=deps.settings.candidates, threshold=floor,
        filters=Filters(kind=(STEP_KIND,), status=(MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED),
                        metadata={"action": action}),
        now=deps.clock(), lifecycle=False, understand_time=False, graph=False, record_access=False,
    )  # fmt: skip
    found: dict[str, float] = {}
    for hit in deps.search(query):
        step_id, similarity = hit.memory.metadata.get("step_id"), hit.breakdown.vector_similarity
        if isinstance(step_id, str) and similarity is not None:
            found.setdefault(step_id, similarity)
    return sorted(found.items(), key=lambda pair: pair[1], reverse=True)


def differences(first: str, second: str, topic: set[str]) -> tuple[str, str]:
    """Both texts without the words they share that name the task's topic (its goal's words): what is left is
    what each step does to it. A text with nothing left is compared whole."""
    mine, theirs = keyword_tokens(first), keyword_tokens(second)
    common = set(mine) & set(theirs) & topic
    left = " ".join(t for t in mine if t not in common), " ".join(t for t in theirs if t not in common)
    return left[0] or first, left[1] or second


Candidate = tuple[Step, str, float]  # a recorded step, the goal of its task, its cosine to the query


def closer_look(
    deps: ProcessDeps, text: str, candidates: Sequence[Candidate], context: str = ""
) -> list[tuple[Step, float, float]]:
    """(step, score, cosine) for candidates (step, its compared text, cosine) whose score reaches the threshold, best
    first. Only the ``CLOSER_LOOK`` closest by cosine are embedded again."""
    closest = sorted(candidates, key=lambda candidate: candidate[2], reverse=True)[:CLOSER_LOOK]
    if not closest:
        return []
    pairs = [differences(text, step.input, set(keyword_tokens(f"{goal}\n{context}"))) for step, goal, _ in closest]
    vectors = deps.embed([part for pair in pairs for part in pair])
    residual = np.einsum("ij,ij->i", vectors[0::2], vectors[1::2])
    scored = [(step, round((cosine + float(rest)) / 2, 4), round(cosine, 4))
              for (step, _, cosine), rest in zip(closest, residual, strict=True)]  # fmt: skip
    kept = [pair for pair in scored if pair[1] >= deps.settings.dead_end_similarity]
    return sorted(kept, key=lambda pair: pair[1], reverse=True)
