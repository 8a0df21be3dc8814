"""Two clocks: valid time from the conversation's own timestamps, record time from the processing. An imported
2023 conversation answers ``as_of`` a 2023 date with 2023's state; ``known_at`` answers with what the store
held; graph edges follow the same valid time."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.testing import ManualClock
from memstrata.types import MemoryStatus
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler
from support.scripted_llm import Reply, ScriptedServer, completion

from .conftest import scripted_chat

IMPORTED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SAID = {
    "I live in Beijing and work at Baidu.": (
        datetime(2023, 3, 1, 9, 0, tzinfo=UTC),
        ["User lives in Beijing", "User works at Baidu"],
        [["I", "lives_in", "Beijing"], ["I", "works_at", "Baidu"]],
    ),
    "I moved to Shanghai last month.": (
        datetime(2023, 9, 15, 9, 0, tzinfo=UTC),
        ["User moved to Shanghai last month"],
        [["I", "lives_in", "Shanghai"]],
    ),
}


def _model(request: dict[str, Any]) -> Reply:
    """An ideal model: each turn's facts and triples; "moved to Shanghai" contradicts "lives in Beijing"."""
    prompt = request["messages"][-1]["content"]
    pair = re.match(r"^OLD: (.*)\nNEW: (.*)$", prompt)
    if pair:
        return completion({"answer": "conflict" if "Beijing" in pair[1] and "Shanghai" in pair[2] else "compatible"})
    facts, relations = [], []
    for number, content in re.findall(r"^\[(\d+)\] user: (.*)$", prompt, re.M):
        facts += [{"turn": int(number), "text": text} for text in SAID[content][1]]
        relations += SAID[content][2]
    return completion({"facts": facts, "relations": relations})


def _imported(store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer) -> Memory:
    server.answer_with(_model)
    chat = scripted_chat(server)
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    memory = Memory(store, embedder, settings=settings, clock=ManualClock(IMPORTED_AT),
                    extractor=LLMExtractor(chat), reconciler=LLMReconciler(chat))  # fmt: skip
    turns = [{"role": "user", "content": text, "timestamp": when} for text, (when, _, _) in SAID.items()]
    memory.add(turns, user_id="u1", infer=True, wait=True)  # one job: both turns, imported years later
    return memory


def _texts(memory: Memory, query: str, **when: datetime) -> list[str]:
    hits = memory.search(query, user_id="u1", filters={"exclude_kind": ["episode"]}, **when)  # type: ignore[arg-type]
    return [hit.text for hit in hits]


def test_an_imported_2023_conversation_answers_as_of_2023(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer
) -> None:
    memory = _imported(store, embedder, server)
    in_june = _texts(memory, "Where does the user live?", as_of=datetime(2023, 6, 1, tzinfo=UTC))
    assert "User lives in Beijing" in in_june and not any("Shanghai" in t for t in in_june)
    now = _texts(memory, "Where does the user live?")
    assert "User moved to Shanghai last month" in now and "User lives in Beijing" not in now
    before_any = _texts(memory, "Where does the user live?", as_of=datetime(2022, 1, 1, tzinfo=UTC))
    assert before_any == []

    facts = {m.text: m for m in memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"],
                                                                          "status": list(MemoryStatus)})}  # fmt: skip
    beijing, shanghai = facts["User lives in Beijing"], facts["User moved to Shanghai last month"]
    assert beijing.valid_from == datetime(2023, 3, 1, 9, 0, tzinfo=UTC)  # when it was said, not when imported
    assert shanghai.valid_from == datetime(2023, 8, 1, tzinfo=UTC)  # "last month", resolved against its turn
    assert shanghai.event_time == datetime(2023, 8, 1, tzinfo=UTC)
    assert beijing.status == MemoryStatus.SUPERSEDED and beijing.valid_to == shanghai.valid_from
    assert beijing.created_at == IMPORTED_AT and beijing.recorded_to == IMPORTED_AT  # record time: the import
    assert facts["User works at Baidu"].status == MemoryStatus.ACTIVE


def test_known_at_is_record_time(store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer) -> None:
    memory = _imported(store, embedder, server)
    before_import = memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"],
                                                           "known_at": datetime(2025, 1, 1, tzinfo=UTC)})  # fmt: skip
    assert before_import == []  # in 2025 the store knew nothing of it, though it was true in 2023


def test_graph_edges_take_valid_time_from_the_turns(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer
) -> None:
    memory = _imported(store, embedder, server)
    edges = {e.target: e.record for e in memory.graph.relation_history("I", "lives_in", user_id="u1")}
    assert edges["Beijing"].valid_from == datetime(2023, 3, 1, 9, 0, tzinfo=UTC)
    assert edges["Shanghai"].valid_from == datetime(2023, 8, 1, tzinfo=UTC)  # the clause says "last month"
    assert edges["Beijing"].valid_to == edges["Shanghai"].valid_from


def test_a_change_from_an_imported_turn_is_valid_from_that_turn(
    store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer
) -> None:
    """No time words in the turn: the new version starts when its turn was said, not when the import ran."""
    facts = {"I work at Baidu.": "User works at Baidu", "I quit Baidu and joined a startup.": "User works at a startup"}

    def model(request: dict[str, Any]) -> Reply:
        prompt = request["messages"][-1]["content"]
        if re.match(r"^OLD: (.*)\nNEW: (.*)$", prompt):
            return completion({"answer": "conflict"})
        said = re.findall(r"^\[(\d+)\] user: (.*)$", prompt, re.M)
        return completion({"facts": [{"turn": int(n), "text": facts[text]} for n, text in said]})

    server.answer_with(model)
    chat = scripted_chat(server)
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    memory = Memory(store, embedder, settings=settings, clock=ManualClock(IMPORTED_AT),
                    extractor=LLMExtractor(chat), reconciler=LLMReconciler(chat))  # fmt: skip
    joined = datetime(2023, 10, 1, 9, 0, tzinfo=UTC)
    for (text, when) in (("I work at Baidu.", datetime(2023, 3, 1, 9, 0, tzinfo=UTC)),
                         ("I quit Baidu and joined a startup.", joined)):  # fmt: skip
        memory.add([{"role": "user", "content": text, "timestamp": when}], user_id="u1", infer=True, wait=True)
    stored = {m.text: m for m in memory.get_all(user_id="u1", filters={"exclude_kind": ["episode"],
                                                                           "status": list(MemoryStatus)})}  # fmt: skip
    startup, baidu = stored["User works at a startup"], stored["User works at Baidu"]
    assert startup.status == MemoryStatus.ACTIVE and startup.valid_from == joined
    assert baidu.status == MemoryStatus.SUPERSEDED and baidu.valid_to == joined
    in_2024 = _texts(memory, "Where does the user work?", as_of=datetime(2024, 1, 1, tzinfo=UTC))
    assert "User works at a startup" in in_2024 and "User works at Baidu" not in in_2024
