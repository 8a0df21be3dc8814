"""The labelled bilingual decision set (tests/data/write_decisions.json) through the whole write path, with a
scripted model at the HTTP boundary that answers as an ideal extractor and judge would (and, where the data
says so, with wrong answers the engine must refuse: a "same" for a different person, a "contradicts" across
people). What is checked is the engine: candidates, checked decisions, valid time, history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from bench.write_scenarios import Scenario, load_decision_set, run_scenario, scripted_answer

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler
from support.scripted_llm import ScriptedServer, completion

from .conftest import scripted_chat

DECISIONS = load_decision_set()


def test_the_set_is_large_bilingual_and_covers_every_class() -> None:
    scenarios = DECISIONS.scenarios
    assert len(scenarios) >= 60 and len({s.id for s in scenarios}) == len(scenarios)
    classes = {s.class_ for s in scenarios}
    assert classes >= {"keep_unrelated", "update", "ending", "duplicate", "multi_fact", "mixed_language",
                       "third_party", "relative_date"}  # fmt: skip
    assert all(sum(s.class_ == c for s in scenarios) >= 6 for c in classes)
    assert {s.lang for s in scenarios} == {"zh", "en", "mixed"}


@pytest.mark.parametrize("scenario", DECISIONS.scenarios, ids=lambda s: s.id)
def test_scenario_with_an_ideal_model(
    scenario: Scenario, store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer
) -> None:
    server.answer_with(lambda request: completion(scripted_answer(request, scenario)))
    clock = ManualClock(DECISIONS.base - timedelta(days=60))
    chat = scripted_chat(server)
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    memory = Memory(store, embedder, settings=settings, clock=clock, extractor=LLMExtractor(chat),
                    reconciler=LLMReconciler(chat))  # fmt: skip
    outcome = run_scenario(memory, clock, DECISIONS, scenario, user_id="u1")
    assert outcome.passed, (outcome.failures, outcome.memories)
    assert outcome.damaged == 0
