"""A conversation pasted as the query (an agent asking what memory holds for the dialogue so far): its question
sentences are often the other speaker's ("what's your favourite flavour?"), so deep search keeps the whole
transcript as the question instead of cutting it down to them, offline and with a model's reading beside it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from tests.deep.conftest import MakeDeep
from tests.deep.oracle import DeepOracle

from memstrata.deep.heuristics import is_transcript
from memstrata.deep.understand import heuristic_understanding, understand
from support.scripted_llm import ScriptedServer

NOW = datetime(2026, 1, 10, tzinfo=UTC)
ZH = (
    '<Bart>:"你知道吗，我今天发现了一个超级好吃的披萨店！"\n'
    '<Assistant>:"真的吗？你最喜欢哪种口味的呢？"\n'
    '<Bart>:"我喜欢多肉的那种，特别是加了很多香肠和培根的！"\n'
)
EN = (
    "Lisa: I found an amazing pizza place today!\n"
    "Assistant: Really? What's your favourite flavour?\n"
    "Lisa: The meaty ones, loaded with sausage and bacon!\n"
)
MEMORIES = {
    ZH: ["我最喜欢的冰淇淋口味是抹茶。", "我最喜欢的颜色是蓝色。", "我最喜欢的游戏是捉迷藏。",
         "上周六和爸爸去吃了一家披萨店，点了培根香肠披萨。", "我养了一只小狗叫豆豆。"],
    EN: ["My favourite ice cream flavour is mint.", "My favourite colour is green.", "My favourite game is tag.",
         "Last Saturday Dad took me for a sausage and bacon pizza.", "I have a puppy called Pip."],
}  # fmt: skip


def test_what_counts_as_a_transcript() -> None:
    assert is_transcript(ZH) and is_transcript(EN)
    assert is_transcript("用户：我想换工作。\n助手：为什么呢？")
    assert not is_transcript("哎呀最近好忙。对了，我女儿的钢琴老师叫什么？")
    assert not is_transcript("Reminder: what did Caroline research?")  # one tagged line is a message, not a dialogue


@pytest.mark.parametrize("transcript", [ZH, EN], ids=["zh", "en"])
def test_offline_the_transcript_stays_the_question(transcript: str) -> None:
    understood = heuristic_understanding(transcript, NOW)
    assert understood.question == transcript.strip() and understood.sub_questions == ()


def test_the_models_reading_of_a_transcript_is_searched_beside_it(server: ScriptedServer) -> None:
    oracle = DeepOracle(server, {"understand": {"question": "你最喜欢哪种口味？", "entities": [], "sub_questions": []}})
    understood, step = understand(ZH, NOW, oracle.chat(), use_model=True, max_tokens=200)
    assert understood.source == "model" and step.fallback is None
    assert understood.question == ZH.strip()
    assert understood.sub_questions == ("你最喜欢哪种口味？",)


@pytest.mark.parametrize(("transcript", "target"), [(ZH, "培根香肠披萨"), (EN, "bacon pizza")], ids=["zh", "en"])
def test_deep_search_on_a_transcript_finds_what_the_dialogue_is_about(
    make_deep: MakeDeep, transcript: str, target: str
) -> None:
    memory = make_deep(None)
    memory.add(MEMORIES[transcript], user_id="u")
    result = memory.deep_search(transcript, user_id="u", limit=1)
    assert target in result.hits[0].memory.text
    assert target in memory.search(transcript, user_id="u", limit=1)[0].memory.text  # as fast search finds it
