"""A repeated search query is not embedded again: the same vectors, fewer model calls, bounded, never shared."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.errors import ProviderError
from memstrata.providers.coalescing import CoalescingEmbedder
from memstrata.providers.protocol import Embedder, Vectors
from memstrata.providers.recent_vectors import RecentVectors
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.testing import HashingEmbedder
from memstrata.types import Scope


class Counted:
    """Any embedder, with the texts each model call carried."""

    def __init__(self, inner: Embedder, reply: Callable[[Sequence[str], Vectors], Vectors] | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dims = inner.dims
        self.calls: list[list[str]] = []
        self.reply = reply

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        vectors = self.inner.embed_batch(texts)
        return self.reply(texts, vectors) if self.reply else vectors


def test_a_repeated_query_gets_the_models_vector_without_a_model_call(embedder: UniversalSentenceEncoder) -> None:
    model = Counted(embedder)
    recent = RecentVectors(model, size=16)
    first = recent.embed_batch(["我对什么过敏？"])
    again = recent.embed_batch(["我对什么过敏？"])
    assert model.calls == [["我对什么过敏？"]]
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(again, embedder.embed_batch(["我对什么过敏？"]), atol=1e-6)
    assert (recent.hits, recent.misses) == (1, 1)


def test_only_new_texts_go_to_the_model_in_one_call_and_rows_keep_the_asked_order(
    embedder: UniversalSentenceEncoder,
) -> None:
    model = Counted(embedder)
    recent = RecentVectors(model, size=16)
    recent.embed_batch(["Where do I live?"])
    asked = ["What is my cat's name?", "Where do I live?", "我住在哪里？", "What is my cat's name?"]
    vectors = recent.embed_batch(asked)
    assert model.calls[1] == ["What is my cat's name?", "我住在哪里？"]  # each new text once
    np.testing.assert_allclose(vectors, embedder.embed_batch(asked), atol=1e-6)


def test_the_table_keeps_the_most_recently_used_texts_up_to_its_size() -> None:
    model = Counted(HashingEmbedder())
    recent = RecentVectors(model, size=2)
    for text in ("alpha", "beta", "alpha", "gamma"):  # alpha used again, so beta is the oldest when gamma comes
        recent.embed_batch([text])
    model.calls.clear()
    recent.embed_batch(["alpha"])
    recent.embed_batch(["gamma"])
    assert model.calls == []
    recent.embed_batch(["beta"])
    assert model.calls == [["beta"]]


def test_large_calls_pass_through_and_are_not_kept() -> None:
    model = Counted(HashingEmbedder())
    recent = RecentVectors(model, size=100, most_texts=3)
    texts = ["one", "two", "three", "four"]
    recent.embed_batch(texts)
    recent.embed_batch(["one"])
    assert model.calls == [texts, ["one"]]


def test_changing_an_answer_never_changes_a_later_one() -> None:
    recent = RecentVectors(HashingEmbedder(), size=8)
    first = recent.embed_batch(["What sport do I play?"])
    kept = first.copy()
    first[:] = 0.0
    np.testing.assert_array_equal(recent.embed_batch(["What sport do I play?"]), kept)


def test_a_failed_call_reaches_the_caller_and_keeps_nothing() -> None:
    failing = Counted(HashingEmbedder(), reply=lambda texts, vectors: (_ for _ in ()).throw(ProviderError("down")))
    recent = RecentVectors(failing, size=8)
    with pytest.raises(ProviderError, match="down"):
        recent.embed_batch(["Where do I work?"])
    with pytest.raises(ProviderError, match="down"):
        recent.embed_batch(["Where do I work?"])
    assert len(failing.calls) == 2


def test_a_model_returning_too_few_vectors_is_a_provider_error() -> None:
    short = Counted(HashingEmbedder(), reply=lambda texts, vectors: vectors[:1])
    recent = RecentVectors(short, size=8)
    with pytest.raises(ProviderError, match="1 vectors for 2 texts"):
        recent.embed_batch(["a question", "another question"])


def test_concurrent_repeats_get_the_same_vectors(embedder: UniversalSentenceEncoder) -> None:
    queries = ["Where do I live?", "我住在哪里？", "What is my cat's name?", "我的狗是什么品种？"] * 8
    recent = RecentVectors(CoalescingEmbedder(embedder), size=64)
    with ThreadPoolExecutor(max_workers=8) as pool:
        vectors = list(pool.map(lambda text: recent.embed_batch([text])[0], queries))
    expected = embedder.embed_batch(queries)
    np.testing.assert_allclose(np.stack(vectors), expected, atol=1e-6)


def _memory(tmp_path: Path, embedder: Embedder, **embedder_settings: int) -> Memory:
    settings = load_settings({"store": {"path": str(tmp_path / "m.db")}, "embedder": embedder_settings})
    return Memory(SQLiteStore(tmp_path / "m.db"), embedder, settings=settings)


def test_context_embeds_its_standing_questions_once_across_calls(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    model = Counted(embedder)
    with _memory(tmp_path, model) as memory:
        memory.add(["我对花生过敏", "I live in Leipzig now", "我养了一只柯基叫柿子"], user_id="lin", infer=False)
        model.calls.clear()
        first = memory.context("Book a dinner for Friday", user_id="lin", budget_tokens=600)
        embedded_first = sum(len(call) for call in model.calls)
        model.calls.clear()
        second = memory.context("Book a dinner for Friday", user_id="lin", budget_tokens=600)
        assert model.calls == []  # the task, its search and the seven standing questions: all known
        assert second.text == first.text
        memory.context("Plan a weekend trip", user_id="lin", budget_tokens=600)
        assert model.calls == [["Plan a weekend trip"]]  # only the new task
    assert embedded_first >= 8


def test_a_scope_reuses_only_its_own_queries(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    """No search is answered faster because another user asked the same words (a timing side channel)."""
    model = Counted(embedder)
    with _memory(tmp_path, model) as memory:
        for user in ("lin", "sam"):
            memory.add(["我对花生过敏"], user_id=user, infer=False)
        model.calls.clear()
        memory.search("我对什么过敏？", user_id="lin")
        memory.search("我对什么过敏？", user_id="sam")
        memory.search("我对什么过敏？", user_id="lin", agent_id="helper")
        assert model.calls == [["我对什么过敏？"]] * 3
        memory.search("我对什么过敏？", user_id="sam")
        assert len(model.calls) == 3


def test_views_of_two_scopes_keep_apart_and_share_the_bound() -> None:
    model = Counted(HashingEmbedder())
    recent = RecentVectors(model, size=2)
    lin, sam = recent.for_scope(Scope(user_id="lin")), recent.for_scope(Scope(user_id="sam", tenant_id="acme"))
    lin.embed_batch(["Where do I live?"])
    sam.embed_batch(["Where do I live?"])
    lin.embed_batch(["Where do I live?"])
    assert len(model.calls) == 2
    recent.for_scope(Scope(user_id="kim")).embed_batch(["Where do I live?"])  # a third entry: sam's is the oldest
    sam.embed_batch(["Where do I live?"])
    assert len(model.calls) == 4


def test_query_cache_zero_embeds_every_query(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    model = Counted(embedder)
    with _memory(tmp_path, model, query_cache=0) as memory:
        memory.add(["我对花生过敏"], user_id="lin", infer=False)
        model.calls.clear()
        memory.search("我对什么过敏？", user_id="lin")
        memory.search("我对什么过敏？", user_id="lin")
        assert model.calls == [["我对什么过敏？"], ["我对什么过敏？"]]


ASKED_TOGETHER = [
    ("我对什么过敏？", {"user_id": "lin"}),
    ("Where do I live now?", {"user_id": "sam"}),
    ("What did I buy yesterday?", {"user_id": "lin"}),  # the time it names is not embedded (read/retrieve.py)
]


def _two_users(memory: Memory) -> None:
    memory.add(["我对花生过敏", "Bought a rice cooker yesterday"], user_id="lin", infer=False)
    memory.add(["I live in Leipzig now"], user_id="sam", infer=False)


def test_queries_embedded_ahead_together_are_not_embedded_again_by_their_searches(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    """A service's fast searches run one after another on its event loop: their queries are embedded in one model
    call first (api/query_batches.py), and each search then finds its vector, with the same hits."""
    model = Counted(embedder)
    with _memory(tmp_path / "ahead", model) as memory, _memory(tmp_path / "alone", embedder) as alone:
        for each in (memory, alone):
            _two_users(each)
        model.calls.clear()
        memory.embed_queries([*ASKED_TOGETHER, ("", {"user_id": "lin"})])  # an invalid one is passed over
        assert model.calls == [["我对什么过敏？", "Where do I live now?", "What did I buy ?"]]  # as search embeds it
        for text, scope in ASKED_TOGETHER:
            hits = [(hit.memory.text, round(hit.score, 4)) for hit in memory.search(text, **scope)]
            assert hits and hits == [(hit.memory.text, round(hit.score, 4)) for hit in alone.search(text, **scope)]
        assert len(model.calls) == 1
        memory.embed_queries([("whats my adress", {"user_id": "sam"})])  # search reads it as "address": a miss
        memory.search("whats my adress", user_id="sam")
        assert len(model.calls) == 3


def test_searches_of_one_event_loop_round_share_one_model_call(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    import asyncio

    from memstrata.api.query_batches import QueryBatches

    model = Counted(embedder)
    batches = QueryBatches()
    with _memory(tmp_path, model) as memory:
        _two_users(memory)
        model.calls.clear()

        async def arrive_together() -> None:
            views = [memory.for_tenant(None) for _ in ASKED_TOGETHER]  # the service makes a view per request
            await asyncio.gather(*(batches.embedded(view, text, scope)
                                   for view, (text, scope) in zip(views, ASKED_TOGETHER, strict=True)))  # fmt: skip
            await batches.embedded(memory, "我住在哪里？", {"user_id": "sam"})  # a later round: its own call

        asyncio.run(arrive_together())
        assert (batches.batches, batches.queries) == (2, 4)
        assert [len(call) for call in model.calls] == [3, 1]


def test_a_failure_to_embed_ahead_holds_up_no_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from memstrata.api.query_batches import QueryBatches

    batches = QueryBatches()
    with _memory(tmp_path, HashingEmbedder()) as memory:

        def fails(*_: object) -> None:
            raise RuntimeError("the model broke")

        monkeypatch.setattr(Memory, "embed_queries", fails)

        async def arrive_together() -> None:
            await asyncio.wait_for(asyncio.gather(*(batches.embedded(memory, text, scope)
                                                    for text, scope in ASKED_TOGETHER)), timeout=5)  # fmt: skip

        asyncio.run(arrive_together())  # every wait ends: each search then embeds for itself
        assert (batches.batches, batches.queries) == (0, 0)
