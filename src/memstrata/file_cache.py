"""Files a process derives from packaged data once per machine, kept in the user cache directory.

Several things every process needs are slow to read in the form their package ships them: the USE tokenizer is a
protobuf parsed in Python, its weights a compressed archive, the English word list gzipped JSON. Each is derived
once, written here, and read back by later processes in a fraction of the time. A cache file is named after what
it was derived from, so a new release derives it again; one that cannot be read or written only costs the
derivation.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import platformdirs

logger = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("memstrata"))


def writable(directory: Path) -> bool:
    """Whether files can be written in ``directory`` (made if missing): checked before deriving a large file that
    could not be kept."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


def write_atomically(path: Path, write: Callable[[BinaryIO], None], *, what: str) -> bool:
    """Write ``path`` through ``write`` so that a process reading meanwhile sees the whole file or none. False
    (logged) where the directory cannot be written: a read-only home or a full disk leaves the next process to
    derive the file again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                write(out)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        logger.info("could not cache %s in %s: %s", what, path.parent, exc)
        return False
    return True


def remove_older(current: Path, pattern: str) -> None:
    """Delete the files beside ``current`` matching ``pattern`` that an earlier release derived (the weights are
    80 MB: one copy per release would pile up)."""
    for stale in current.parent.glob(pattern):
        if stale != current and not stale.name.endswith(".tmp"):
            stale.unlink(missing_ok=True)
