from __future__ import annotations

from collections.abc import Iterator

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.openai_chat import OpenAICompatibleChat
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler
from support.scripted_llm import ScriptedServer


@pytest.fixture
def scripted_memory(store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer) -> Iterator[Memory]:
    """A Memory whose model is the scripted server; the queue is driven by the test (no background thread)."""
    chat = OpenAICompatibleChat(server.base_url, "scripted", timeout_s=1.0, max_attempts=2, transport_retries=0)
    settings = load_settings(
        {"store": {"path": store.location}, "write": {"background": False, "trigger": "every_turn"}}
    )
    memory = Memory(store, embedder, settings=settings, extractor=LLMExtractor(chat), reconciler=LLMReconciler(chat))
    yield memory
