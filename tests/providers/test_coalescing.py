"""Concurrent search queries share model calls, get exactly their own vectors, and never hang on a failure."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.errors import ProviderError
from memstrata.providers.coalescing import CoalescingEmbedder
from memstrata.providers.protocol import Vectors
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.testing import HashingEmbedder

QUERIES = [
    "Where do I live?",
    "我住在哪里？",
    "What sport do I play on weekends?",
    "我对什么过敏？",
    "What is my cat's name?",
    "我的狗是什么品种？",
    "Which instrument am I learning?",
    "公司下个月搬到哪里？",
]


class HeldFirstCall(HashingEmbedder):
    """Holds its first model call until released, so the test decides which calls arrive while it is busy."""

    def __init__(self, fail_batch: bool = False) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.fail_batch = fail_batch
        self.sizes: list[int] = []

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.sizes.append(len(texts))
        if len(self.sizes) == 1:
            self.entered.set()
            assert self.release.wait(10)
        elif self.fail_batch:
            raise ProviderError("embedding service unavailable (test)")
        return super().embed_batch(texts)


def _run_while_first_is_held(
    embedder: CoalescingEmbedder, inner: HeldFirstCall, queries: list[str]
) -> list[Vectors | BaseException]:
    def call(text: str) -> Vectors | BaseException:
        try:
            return embedder.embed_batch([text])
        except ProviderError as exc:
            return exc

    with ThreadPoolExecutor(len(queries)) as pool:
        first = pool.submit(call, queries[0])
        assert inner.entered.wait(10)
        rest = [pool.submit(call, text) for text in queries[1:]]
        deadline = time.monotonic() + 10
        while len(embedder._queue) < len(queries) - 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        inner.release.set()
        return [first.result(10), *(future.result(10) for future in rest)]


def test_calls_that_find_the_model_busy_run_as_one_batch_with_their_own_vectors() -> None:
    inner = HeldFirstCall()
    embedder = CoalescingEmbedder(inner, max_texts=32)
    results = _run_while_first_is_held(embedder, inner, QUERIES)
    assert inner.sizes == [1, len(QUERIES) - 1]  # the lone first call, then everyone who waited, together
    expected = HashingEmbedder().embed_batch(QUERIES)
    for got, want in zip(results, expected, strict=True):
        assert isinstance(got, np.ndarray) and got.shape == (1, 64)
        np.testing.assert_allclose(got[0], want, atol=1e-6)
    assert embedder.embed_batch(["alone"]).shape == (1, 64)  # the model is free again: no one left waiting
    assert inner.sizes[-1] == 1


def test_a_batch_is_bounded_and_the_rest_run_in_the_next() -> None:
    inner = HeldFirstCall()
    embedder = CoalescingEmbedder(inner, max_texts=3)
    results = _run_while_first_is_held(embedder, inner, QUERIES)
    assert inner.sizes == [1, 3, 3, 1]
    assert all(isinstance(r, np.ndarray) for r in results)


def test_a_failed_batch_fails_each_of_its_callers_and_the_next_call_still_runs() -> None:
    inner = HeldFirstCall(fail_batch=True)
    embedder = CoalescingEmbedder(inner)
    results = _run_while_first_is_held(embedder, inner, QUERIES[:4])
    assert isinstance(results[0], np.ndarray)
    assert all(isinstance(r, ProviderError) for r in results[1:])
    inner.fail_batch = False
    assert embedder.embed_batch(["after the outage"]).shape == (1, 64)


def test_large_calls_go_straight_to_the_model() -> None:
    inner = HashingEmbedder()
    embedder = CoalescingEmbedder(inner, small_call=4)
    assert embedder.embed_batch([f"turn {i}" for i in range(10)]).shape == (10, 64)
    assert embedder.batches == 0 and inner.calls == 1


def test_real_model_vectors_under_concurrency_match_lone_calls() -> None:
    model = UniversalSentenceEncoder()
    alone = model.embed_batch(QUERIES)
    embedder = CoalescingEmbedder(model)
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(lambda text: embedder.embed_batch([text])[0], QUERIES * 4))
    for i, vector in enumerate(together):
        np.testing.assert_allclose(vector, alone[i % len(QUERIES)], atol=2e-5)
    assert embedder.texts == len(together) and embedder.batches <= len(together)


@pytest.mark.parametrize("query_batch", [1, 32])
def test_concurrent_searches_rank_as_sequential_ones(tmp_path: Path, query_batch: int) -> None:
    path = tmp_path / "m.db"
    settings = load_settings({"store": {"path": str(path)}, "embedder": {"query_batch": query_batch}})
    memory = Memory(SQLiteStore(path), UniversalSentenceEncoder(), settings=settings)
    memories = ["我住在杭州，喜欢喝龙井茶", "I play badminton on Saturdays", "我的猫叫团子", "I am allergic to peanuts"]
    for text in memories:
        memory.add(text, user_id="u", infer=False)
    questions = ["Where do I live?", "我周末打什么球？", "What is my cat's name?", "我对什么过敏？"] * 5

    def top(question: str) -> str:
        return memory.search(question, user_id="u", threshold=0.0)[0].text

    sequential = [top(q) for q in questions]
    with ThreadPoolExecutor(10) as pool:
        assert list(pool.map(top, questions)) == sequential
    memory.close()
