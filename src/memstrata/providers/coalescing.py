"""Concurrent small embedding calls share one model call.

A search embeds one short query. Alone it costs the bundled USE model about 2.6 ms; in a batch of eight
about 0.8 ms each (measured on this project's 2-core machine). When a service runs many searches at once,
the calls that arrive while the model is busy would wait for it anyway: here they queue, and the thread
that next runs the model takes every queued call with it. A lone call runs at once (no timer, no added
latency), and a large call (an import's batch of turns) goes straight to the model.

The thread that ran a batch hands the model to the oldest waiting call (leader hand-off), so no thread
keeps serving other callers' queries after its own answer is ready.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence

import numpy as np

from memstrata.errors import ProviderError
from memstrata.providers.protocol import Embedder, InFrontOf, Vectors


class _Call:
    __slots__ = ("error", "leads", "ready", "texts", "vectors")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.ready = threading.Event()
        self.leads = False  # woken to run the next batch rather than with its vectors
        self.vectors: Vectors | None = None
        self.error: BaseException | None = None

    def outcome(self) -> Vectors:
        if self.error is not None:
            raise self.error
        assert self.vectors is not None
        return self.vectors


class CoalescingEmbedder(InFrontOf):
    """Wraps an embedder; ``embed_batch`` of at most ``small_call`` texts may run batched with other threads'.

    ``max_texts`` bounds one batch. Every caller in a batch sees the batch's error if the model fails, which
    for a search means keyword-only results for those queries (``read/retrieve.py``), as a lone failure would.
    """

    def __init__(self, inner: Embedder, *, max_texts: int = 32, small_call: int = 4) -> None:
        super().__init__(inner)
        self.max_texts = max(1, max_texts)
        self.small_call = small_call
        self._lock = threading.Lock()
        self._queue: deque[_Call] = deque()
        self._busy = False  # a thread is running (or about to run) a batch
        self.batches = 0  # model calls made for small calls, and the texts they carried (observability, tests)
        self.texts = 0

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        if not texts or len(texts) > self.small_call or self.max_texts == 1:
            return self.inner.embed_batch(texts)
        call = _Call(list(texts))
        with self._lock:
            self._queue.append(call)
            leads = not self._busy
            self._busy = True
        if not leads:
            call.ready.wait()
            if not call.leads:
                return call.outcome()
        # The queue's head is this call: the first one when the model was idle, or the one handed the lead.
        self._run_batch()
        return call.outcome()

    def _take_batch(self) -> list[_Call]:
        with self._lock:
            batch = [self._queue.popleft()]
            size = len(batch[0].texts)
            while self._queue and size + len(self._queue[0].texts) <= self.max_texts:
                size += len(self._queue[0].texts)
                batch.append(self._queue.popleft())
            return batch

    def _run_batch(self) -> None:
        batch = self._take_batch()
        texts = [text for call in batch for text in call.texts]
        try:
            vectors = self.inner.embed_batch(texts)
            if len(vectors) != len(texts):
                raise ProviderError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
            start = 0
            for call in batch:
                call.vectors = np.ascontiguousarray(vectors[start : start + len(call.texts)])
                start += len(call.texts)
        except BaseException as exc:  # every caller hears of the failure; none waits forever
            for call in batch:
                call.error = exc
        finally:
            self._hand_off(batch, len(texts))

    def _hand_off(self, batch: list[_Call], texts: int) -> None:
        with self._lock:
            self.batches += 1
            self.texts += texts
            successor = self._queue[0] if self._queue else None
            if successor is None:
                self._busy = False
            else:
                successor.leads = True
        for call in batch[1:]:  # the first is the running thread's own call
            call.ready.set()
        if successor is not None:
            successor.ready.set()
