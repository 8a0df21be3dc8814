"""The write path with the real bundled model (Qwen2.5-Coder-1.5B via xllamacpp), loaded once per session."""

from __future__ import annotations

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.lexical import has_han
from memstrata.providers.local_llm import LocalChatModel
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.types import JobStatus, MemoryStatus
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler

pytestmark = pytest.mark.slow


@pytest.fixture
def local_memory(store: Store, embedder: UniversalSentenceEncoder, local_model: LocalChatModel) -> Memory:
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    return Memory(
        store, embedder, settings=settings, extractor=LLMExtractor(local_model), reconciler=LLMReconciler(local_model)
    )


def _facts(memory: Memory, user: str, *statuses: MemoryStatus) -> list[str]:
    filters = {"exclude_kind": ["episode"], "status": list(statuses or [MemoryStatus.ACTIVE])}
    return [m.text for m in memory.get_all(user_id=user, filters=filters)]


def _done(memory: Memory, user: str) -> None:
    jobs = memory.list_jobs(user_id=user)
    assert jobs and all(job.status == JobStatus.DONE for job in jobs), [(j.status, j.error) for j in jobs]


def test_chinese_conversation_gives_chinese_facts(local_memory: Memory) -> None:
    local_memory.add(
        [
            {"role": "user", "content": "我叫李明，住在杭州，是一名产品经理。"},
            {"role": "assistant", "content": "你好李明！"},
            {"role": "user", "content": "我对花生过敏，平时喜欢喝乌龙茶。"},
        ],
        user_id="zh",
        infer=True,
        wait=True,
    )
    _done(local_memory, "zh")
    facts = _facts(local_memory, "zh")
    assert len(facts) >= 3 and all(has_han(fact) for fact in facts), facts
    joined = " ".join(facts)
    assert "杭州" in joined and "花生" in joined


def test_english_conversation_gives_english_facts(local_memory: Memory) -> None:
    local_memory.add(
        [
            {"role": "user", "content": "I'm Sarah, a nurse in Toronto."},
            {"role": "user", "content": "I have two cats and I'm training for a half marathon in May."},
        ],
        user_id="en",
        infer=True,
        wait=True,
    )
    _done(local_memory, "en")
    facts = _facts(local_memory, "en")
    assert len(facts) >= 2 and not any(has_han(fact) for fact in facts), facts
    assert "Toronto" in " ".join(facts) or "nurse" in " ".join(facts)


def test_new_preference_supersedes_the_old_one(local_memory: Memory) -> None:
    local_memory.add("I like coffee.", user_id="cafe", infer=True, wait=True)
    assert any("coffee" in fact.lower() for fact in _facts(local_memory, "cafe")), _facts(local_memory, "cafe")
    liked = {item.id for item in local_memory.get_all(user_id="cafe", filters={"exclude_kind": ["episode"]})}
    local_memory.add("I don't drink coffee anymore, I now prefer tea.", user_id="cafe", infer=True, wait=True)
    _done(local_memory, "cafe")
    active = _facts(local_memory, "cafe")
    closed = _facts(local_memory, "cafe", MemoryStatus.SUPERSEDED, MemoryStatus.DELETED)
    assert any("tea" in fact.lower() for fact in active), active
    # The old liking is closed ("User no longer drinks coffee" may well be a new, true fact).
    still = [
        i.text for i in local_memory.get_all(user_id="cafe", filters={"exclude_kind": ["episode"]}) if i.id in liked
    ]
    assert not still, (still, active)
    assert any("coffee" in fact.lower() for fact in closed), closed
    old = local_memory.get_all(user_id="cafe", filters={"status": ["superseded", "deleted"], "exclude_kind": "episode"})
    assert all(item.valid_to is not None for item in old)


def test_small_talk_gives_no_facts(local_memory: Memory) -> None:
    local_memory.add(["今天天气不错。", "Nice weather today, isn't it?"], user_id="chat", infer=True, wait=True)
    _done(local_memory, "chat")
    assert _facts(local_memory, "chat") == []
