"""Embedding identity, the cache, reindex, and an embedder that fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import EmbeddingMismatchError, Memory, ProviderError
from memstrata.config import load_settings
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.testing import FailingEmbedder, HashingEmbedder


def _memory(path: Path, embedder: object) -> Memory:
    return Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))  # type: ignore[arg-type]


def test_store_refuses_a_second_embedding_model_until_reindexed(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    first = _memory(path, HashingEmbedder(model_id="model-a"))
    first.add(["red apples", "green pears"], user_id="u1")
    first.close()

    other = HashingEmbedder(dims=32, model_id="model-b")
    second = _memory(path, other)
    with pytest.raises(EmbeddingMismatchError, match="memstrata reindex"):
        second.add("blue plums", user_id="u1")
    with pytest.raises(EmbeddingMismatchError):
        second.search("apples", user_id="u1")
    assert sum(second.reindex(batch_size=1)) == 2
    assert second.store.embedding_id() == "model-b:32"
    second.add("blue plums", user_id="u1")
    assert second.search("apples", user_id="u1")[0].breakdown.vector_rank == 1
    assert sum(second.reindex()) == 0  # nothing left to do


def test_cache_avoids_embedding_the_same_text_twice(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    memory = _memory(tmp_path / "m.db", embedder)
    memory.add(["same text", "other text"], user_id="u1")
    calls = embedder.calls
    memory.add("same text", user_id="u2")
    assert embedder.calls == calls


def test_failed_embedding_keeps_the_raw_turns(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    broken = _memory(path, FailingEmbedder(model_id="hashing-test"))
    with pytest.raises(ProviderError, match="raw turns"):
        broken.add([{"role": "user", "content": "我明天去北京"}], user_id="u1")
    assert [t.message.content for t in broken.messages(user_id="u1")] == ["我明天去北京"]
    assert broken.search("北京", user_id="u1")[0].text == "我明天去北京"  # keyword search still works
    with pytest.raises(ProviderError):
        broken.add("a plain fact", user_id="u1")
    assert [m.text for m in broken.get_all(user_id="u1")] == ["我明天去北京"]  # plain text: all or nothing
    broken.close()

    repaired = _memory(path, HashingEmbedder(model_id="hashing-test"))
    assert sum(repaired.reindex()) == 1
    assert repaired.stats().vectors == 1
