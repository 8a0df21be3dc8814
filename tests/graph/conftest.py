from __future__ import annotations

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from write.conftest import scripted_memory  # noqa: F401  (the scripted-model Memory, shared with tests/write)


@pytest.fixture
def rules_memory(store: Store, embedder: UniversalSentenceEncoder) -> Memory:
    """No model: facts from the bilingual rules, triples from the graph patterns; jobs run on flush()."""
    settings = load_settings({"store": {"path": store.location}, "write": {"background": False}})
    return Memory(store, embedder, settings=settings)


def say(memory: Memory, user: str, *turns: str, session: str = "s1") -> None:
    for turn in turns:
        memory.add(turn, user_id=user, session_id=session, infer=True)
    jobs = memory.flush(user_id=user)
    assert all(job.error is None for job in jobs), [job.error for job in jobs]
