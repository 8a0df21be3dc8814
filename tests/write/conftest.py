from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.openai_chat import OpenAICompatibleChat
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store
from memstrata.write.extract import LLMExtractor
from memstrata.write.reconcile import LLMReconciler
from support.scripted_llm import ScriptedServer

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # bench/write_scenarios.py runs the labelled decision set for tests and bench


def scripted_chat(server: ScriptedServer) -> OpenAICompatibleChat:
    return OpenAICompatibleChat(server.base_url, "scripted", timeout_s=1.0, max_attempts=2, transport_retries=0)


@pytest.fixture
def scripted_memory(store: Store, embedder: UniversalSentenceEncoder, server: ScriptedServer) -> Iterator[Memory]:
    """A Memory whose model is the scripted server; the queue is driven by the test (no background thread)."""
    chat = scripted_chat(server)
    settings = load_settings(
        {"store": {"path": store.location}, "write": {"background": False, "trigger": "every_turn"}}
    )
    memory = Memory(store, embedder, settings=settings, extractor=LLMExtractor(chat), reconciler=LLMReconciler(chat))
    yield memory
