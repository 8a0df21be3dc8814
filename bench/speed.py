"""Ingestion speed: memstrata ``add(infer=False)`` against the raw embedder it is bounded by.

Raw embedding and ``add()`` run interleaved, batch by batch, on the same texts with the same
model instance, so background load on a shared machine hits both alike. A third, store-only run
(``add()`` with the vectors the raw run produced) shows what memstrata itself costs.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import facts
from bench.datasets import Conversation
from bench.embedders import PresetEmbedder, fact_index_texts
from bench.metrics import percentiles
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore


def _memory(path: Path, embedder: Any) -> Memory:
    return Memory(SQLiteStore(path), embedder, settings=load_settings({"store": {"path": str(path)}}))


class _Recorder:
    """The embedder add() uses, noting the texts it was asked for (so the raw run embeds the same ones)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model_id, self.dims = inner, inner.model_id, inner.dims
        self._texts: list[str] = []

    def embed_batch(self, texts: Sequence[str]) -> Any:
        self._texts.extend(texts)
        return self.inner.embed_batch(texts)

    def take(self) -> list[str]:
        texts, self._texts = self._texts, []
        return texts


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else float("nan")


def real_turns(
    conversations: Sequence[Conversation], n: int, use: UniversalSentenceEncoder, *, progress: bool = True
) -> dict[str, Any]:
    """LoCoMo sessions in order until ``n`` turns; one add() per session (its turns as messages)."""
    sessions: list[tuple[str, list[Any]]] = []
    total = 0
    for conv in conversations:
        for number in sorted({t.session for t in conv.turns}):
            turns = [t for t in conv.turns if t.session == number]
            sessions.append((conv.sample_id, turns))
            total += len(turns)
            if total >= n:
                break
        if total >= n:
            break
    raw_s = add_s = store_s = 0.0
    chars = 0
    with tempfile.TemporaryDirectory() as tmp:
        recorder = _Recorder(use)
        memory = _memory(Path(tmp) / "turns.db", recorder)
        preset = PresetEmbedder(use.model_id)
        store_only = _memory(Path(tmp) / "store-only.db", preset)
        for scope, turns in tqdm(sessions, desc="add turns", disable=not progress):
            messages = [{"role": "user", "content": t.content, "name": t.speaker, "timestamp": t.when} for t in turns]
            began = time.perf_counter()
            memory.add(messages, user_id=scope)
            add_s += time.perf_counter() - began
            # The raw run embeds exactly what add() indexed (each turn with the one before it).
            texts = recorder.take()
            chars += sum(len(t) for t in texts)
            began = time.perf_counter()
            vectors = use.embed_batch(texts)
            raw_s += time.perf_counter() - began
            preset.provide(texts, vectors)
            began = time.perf_counter()
            store_only.add(messages, user_id=scope)
            store_s += time.perf_counter() - began
        memory.close()
        store_only.close()
    raw, add = _rate(total, raw_s), _rate(total, add_s)
    return {
        "turns": total,
        "sessions": len(sessions),
        "mean_chars": round(chars / max(total, 1), 1),
        "raw_embed_per_s": raw,
        "add_per_s": add,
        "add_vs_raw": round(add / raw, 3),
        "store_only_add_per_s": _rate(total, store_s),
        "batching": "one add() per LoCoMo session (all its turns as messages); raw embed_batch per session",
    }


def short_facts(n: int, batch: int, use: UniversalSentenceEncoder, *, progress: bool = True) -> dict[str, Any]:
    raw_s = add_s = store_s = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        memory = _memory(Path(tmp) / "facts.db", use)
        preset = PresetEmbedder(use.model_id)
        store_only = _memory(Path(tmp) / "store-only.db", preset)
        for start in tqdm(range(0, n, batch), desc=f"add facts x{batch}", disable=not progress):
            texts = facts.facts(5_000_000 + start, min(batch, n - start))  # away from the scale facts
            began = time.perf_counter()
            vectors = use.embed_batch(texts)
            raw_s += time.perf_counter() - began
            began = time.perf_counter()
            memory.add(texts, user_id="bench")
            add_s += time.perf_counter() - began
            preset.provide(fact_index_texts(texts), vectors)
            began = time.perf_counter()
            store_only.add(texts, user_id="bench")
            store_s += time.perf_counter() - began
        memory.close()
        store_only.close()
    raw, add = _rate(n, raw_s), _rate(n, add_s)
    return {
        "facts": n,
        "batch": batch,
        "raw_embed_per_s": raw,
        "add_per_s": add,
        "add_vs_raw": round(add / raw, 3),
        "store_only_add_per_s": _rate(n, store_s),
    }


def query_embedding(use: UniversalSentenceEncoder, count: int = 100) -> dict[str, float]:
    samples = []
    for text in facts.queries(count, seed=11):
        began = time.perf_counter()
        use.embed_batch([text])
        samples.append(1000 * (time.perf_counter() - began))
    return {k: round(v, 3) for k, v in percentiles(samples).items()}


def run_throughput(
    conversations: Sequence[Conversation], *, turns: int, fact_count: int, progress: bool = True
) -> dict[str, Any]:
    use = UniversalSentenceEncoder(threads=1)
    use.embed_batch(["warm up the model"])
    result: dict[str, Any] = {"embedder": f"{use.model_id} (threads=1, memstrata's default)"}
    result["real_turns"] = real_turns(conversations, turns, use, progress=progress)
    result["short_facts"] = [short_facts(fact_count, batch, use, progress=progress) for batch in (100, 1000)]
    result["query_embedding_ms"] = query_embedding(use)
    best_facts = max(r["add_per_s"] for r in result["short_facts"])
    result["goals"] = {
        "add >= 90% of raw embedder (real turns)": result["real_turns"]["add_vs_raw"] >= 0.9,
        "add >= 90% of raw embedder (short facts, batch 1000)": result["short_facts"][-1]["add_vs_raw"] >= 0.9,
        ">= 1,000 short facts/s in batches": best_facts >= 1000,
    }
    return result
