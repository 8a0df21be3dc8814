"""A question buried in small talk: fast search ranks the small talk's look-alikes first; deep mode finds the
memory asked about. Offline (the heuristics, both stores) and with the real bundled model (slow)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.deep.conftest import MakeDeep

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.deep.fusion import message_weight
from memstrata.providers.local_llm import LocalChatModel
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore

MEMORIES = [
    "这周工作特别忙，天天加班到很晚。",
    "周末还要加班，真的好累。",
    "最近太累了，想好好休息一下。",
    "老板说下周项目要上线，大家都很忙。",
    "我女儿的钢琴老师是李老师，每周六上课。",
    "昨天加班到十点才回家。",
    "Work has been crazy this week, overtime every day.",
    "I am so tired after this long week at work.",
    "My boss wants the release out by Friday, everyone is busy.",
    "My son's swimming coach is called Marco.",
    "Long week, I need a weekend off.",
]
# (question, what the answer memory contains, how many hits are read)
BURIED = [
    # asked with 孩子, fast search finds it too since 女儿 is indexed with the words of its category (categories.py)
    ("哎呀工作好忙，天天加班，累死了。对了，闺女学琴的老师姓什么来着？", "钢琴老师", 1),
    ("ugh, such a long week at work, so tired and busy. anyway, remind me who coaches my kid at the pool?", "Marco", 3),
]


def found(memory: Memory, question: str, target: str, limit: int, mode: str) -> bool:
    hits = memory.search(question, user_id="u", limit=limit, mode=mode)  # type: ignore[arg-type]
    return any(target in hit.memory.text for hit in hits)


@pytest.mark.parametrize(("question", "target", "limit"), BURIED)
def test_deep_heuristics_dig_the_question_out(make_deep: MakeDeep, question: str, target: str, limit: int) -> None:
    memory = make_deep(None)
    memory.add(MEMORIES, user_id="u")
    assert not found(memory, question, target, limit, "fast")
    assert found(memory, question, target, limit, "deep")


@pytest.mark.parametrize(("question", "target", "limit"), BURIED)
def test_understanding_alone_is_enough(make_deep: MakeDeep, question: str, target: str, limit: int) -> None:
    """No expansion, no evaluator: the question searched, the message around it weighed down."""
    memory = make_deep(None, deep={"multi_query": False, "hyde": False, "evaluate": False})
    memory.add(MEMORIES, user_id="u")
    result = memory.deep_search(question, user_id="u", limit=limit)
    assert any(target in hit.memory.text for hit in result.hits)
    weights = {run.origin: run.weight for run in result.trace.rounds[0].queries}
    assert weights == {"question": 1.0, "original": message_weight(question, result.trace.understanding.question)}
    assert weights["original"] < 1.0


def test_message_weight() -> None:
    assert message_weight("Where does Bob work?", "Where does Bob work?") == 1.0
    assert message_weight("ugh. anyway, where does Bob work?", "Where does Bob work?") < 1.0
    assert message_weight("累死了。对了，老师姓什么？", "老师姓什么？") < 1.0
    assert message_weight("Where does Bob work?", "Bob's workplace?") == 1.0  # a rewrite, not chatter removed


@pytest.mark.slow
def test_deep_with_the_bundled_model_finds_what_fast_misses(
    local_model: LocalChatModel, embedder: UniversalSentenceEncoder, tmp_path: Path
) -> None:
    # Understanding only (about two short model calls in all): the step this case needs.
    path = tmp_path / "chatter.db"
    settings = load_settings({"store": {"path": str(path)},
                              "deep": {"multi_query": False, "hyde": False, "evaluate": False}})  # fmt: skip
    with Memory(SQLiteStore(path), embedder, settings=settings, chat_model=local_model) as memory:
        memory.add(MEMORIES, user_id="u")
        for question, target, limit in BURIED:
            assert not found(memory, question, target, limit, "fast")
            result = memory.deep_search(question, user_id="u", limit=limit)
            trace = result.trace
            assert trace.model_calls == 1 and trace.model_id == local_model.model_id
            assert any(target in hit.memory.text for hit in result.hits), trace.log_line()
            if trace.understanding.source == "model":  # checked: in the question's own language, no chatter
                assert ("累" not in trace.understanding.question) and ("tired" not in trace.understanding.question)
