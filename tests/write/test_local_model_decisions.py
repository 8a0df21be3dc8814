"""A subset of the labelled decision set with the real bundled model (Qwen2.5-Coder-1.5B via xllamacpp): one
scenario of each kind that went wrong before (issue 11). The whole set runs in ``python -m bench.write_decisions``
(results per class in bench/results)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.write_decisions import run_decisions
from bench.write_scenarios import load_decision_set, summarise

from memstrata.providers.local_llm import LocalChatModel

pytestmark = pytest.mark.slow

SUBSET = [
    "keep-zh-trip-sister",  # the Chengdu trip and the sister were lost, an unrelated tea fact was "updated"
    "keep-zh-water-sister",  # a sister's job was deleted because the user now drinks water
    "keep-en-hangzhou-tea",  # UPDATE to identical text, the move never stored
    "end-en-car",  # an ending left the old fact active
    "update-zh-winter",  # a reversed preference stored beside the old one
    "date-import-2023",  # an imported 2023 chat answered nothing as_of 2023
]


def test_the_bundled_model_on_the_cases_of_issue_11(local_model: LocalChatModel, tmp_path: Path) -> None:
    scenarios = [s for s in load_decision_set().scenarios if s.id in SUBSET]
    assert len(scenarios) == len(SUBSET)
    outcomes = run_decisions(local_model, scenarios, tmp_path, progress=False)
    summary = summarise(outcomes)
    failures = {o.id: (o.failures, o.memories) for o in outcomes if not o.passed}
    assert summary["unrelated_closed"] == 0, failures
    assert summary["failed_jobs"] == 0, failures
    assert summary["passed"] >= len(SUBSET) - 1, failures
