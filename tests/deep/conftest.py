"""Deep-search fixtures: a Memory over the parametrised store (SQLite and PostgreSQL) with a chosen chat model
and deep settings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.llm import ChatModel
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.protocol import Store

MakeDeep = Callable[..., Memory]


@pytest.fixture
def make_deep(store: Store, embedder: UniversalSentenceEncoder) -> Iterator[MakeDeep]:
    made: list[Memory] = []

    def make(chat: ChatModel | None = None, **sections: Any) -> Memory:
        settings = load_settings({"store": {"path": store.location}, **sections})
        made.append(Memory(store, embedder, settings=settings, chat_model=chat))
        return made[-1]

    yield make
    for opened in made:
        opened.close()
