"""How the SQLite store keeps a memory's vector on disk: float16 behind a 4-byte tag, half of float32.

USE vectors are unit length with components under 0.13; float16 keeps 11 significant bits, so a cosine moves by
at most ~5e-5 (measured on 5,000 real USE vectors against 200 queries: median 6e-6; the top 10 of every query
unchanged). Vectors float16 cannot hold (a component beyond ±60,000) stay float32.

Untagged BLOBs are float32: stores written before this format, entity name vectors, and the bytes PostgreSQL
sends. The tag is a float32 NaN, which no stored vector begins with, so the two never read as each other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memstrata.storage.protocol import Vector

HALF_TAG = b"\x00\x00\xc0\xff"
_HALF_LIMIT = 60_000.0


def encode(vector: Vector) -> bytes:
    values = np.asarray(vector, dtype=np.float32)
    if values.size and float(np.abs(values).max()) >= _HALF_LIMIT:
        return np.ascontiguousarray(values, dtype="<f4").tobytes()
    return HALF_TAG + np.ascontiguousarray(values, dtype="<f2").tobytes()


def decode(blob: Any) -> Vector:
    data = bytes(blob) if not isinstance(blob, bytes) else blob
    if data[:4] == HALF_TAG:
        return np.frombuffer(data, dtype="<f2", offset=4).astype(np.float32)
    return np.frombuffer(data, dtype="<f4").astype(np.float32, copy=False)


def decode_rows(blobs: list[Any]) -> np.ndarray:
    """Several BLOBs -> one float32 matrix; read in one pass when all are float16 of one size (a search rescores
    its few dozen candidates this way: per-row conversions cost more than the arithmetic)."""
    data = [bytes(blob) if not isinstance(blob, bytes) else blob for blob in blobs]
    if not data:
        return np.zeros((0, 0), dtype=np.float32)
    size = len(data[0])
    if all(len(row) == size and row[:4] == HALF_TAG for row in data):
        halves = np.frombuffer(b"".join(row[4:] for row in data), dtype="<f2").reshape(len(data), -1)
        return halves.astype(np.float32)
    return np.stack([decode(row) for row in data])


def as_stored(vector: Vector) -> Vector:
    """``vector`` at the precision the SQLite store keeps it."""
    return decode(encode(vector))
