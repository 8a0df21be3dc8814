"""The embedder protocol: one required batch method, plus an identity for stored vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memstrata.errors import ProviderError

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed width."""

    @property
    def model_id(self) -> str:
        """A stable name for the model, e.g. ``use-multilingual-v3``."""
        ...

    @property
    def dims(self) -> int: ...

    def embed_batch(self, texts: Sequence[str]) -> Vectors:
        """Return an array of shape (len(texts), dims)."""
        ...


class InFrontOf:
    """An embedder in front of another (batching, remembering): the same model, so the same identity and size."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dims(self) -> int:
        return self.inner.dims


def embedding_identity(embedder: Embedder) -> str:
    """The ``model:dims`` label stored with every vector, so a model change is detected."""
    return f"{embedder.model_id}:{embedder.dims}"


def normalise_rows(vectors: npt.ArrayLike, *, expected_rows: int, dims: int, source: str) -> Vectors:
    """Check an embedder's output and L2-normalise it, so cosine similarity is a dot product."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape != (expected_rows, dims):
        raise ProviderError(
            f"{source} returned vectors of shape {array.shape}, expected ({expected_rows}, {dims}); "
            "check the embedding model and its dimensions in the configuration"
        )
    if not np.all(np.isfinite(array)):
        raise ProviderError(f"{source} returned non-finite values; check the embedding service")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(array / norms, dtype=np.float32)
