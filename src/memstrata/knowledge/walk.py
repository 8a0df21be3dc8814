"""Finding the files to ingest: paths and directories, include/exclude globs, in a stable order.

Patterns are ``fnmatch`` globs tested against both the file name and its path relative to the
directory given (``*.pdf``, ``reports/*``, ``*/drafts/*``); ``*`` also crosses ``/``. Hidden files
and folders, Office lock files (``~$x.docx``) and the usual tool folders are excluded by default;
passing exclude patterns replaces those defaults. Symlinked folders are not followed (no cycles).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from memstrata.errors import InvalidInputError

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".*", "*/.*", "~$*", "node_modules/*", "*/node_modules/*", "__pycache__/*", "*/__pycache__/*", "*.tmp",
)  # fmt: skip


@dataclass(frozen=True)
class Found:
    path: Path  # absolute
    root: Path  # the directory the user named (the file itself for a single file)
    name: str | None = None  # the source it is recorded under when not its path (an upload, a fetched URL)

    @property
    def source(self) -> str:
        """The identity recorded in provenance and compared on re-ingestion: the absolute POSIX path."""
        return self.name or self.path.as_posix()

    @property
    def display_name(self) -> str:
        """A short name for messages: the file name, or the end of an upload's or URL's source."""
        return self.name.rstrip("/").rsplit("/", 1)[-1].removeprefix("upload:") if self.name else self.path.name


def _matches(relative: str, name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in patterns)


def selected(relative: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """Taken when it matches an include pattern (or none are given) and no exclude pattern."""
    name = relative.rsplit("/", 1)[-1]
    return (not include or _matches(relative, name, include)) and not _matches(relative, name, exclude)


def discover(
    paths: Sequence[Path], include: Sequence[str] = (), exclude: Sequence[str] = DEFAULT_EXCLUDES
) -> Iterator[Found]:
    """Every selected file under ``paths``, sorted within each directory; a file named directly is always taken."""
    for given in paths:
        path = given.expanduser().absolute()
        if path.is_file():
            yield Found(path, path)
        elif path.is_dir():
            yield from _walk(path, include, exclude)
        else:
            raise InvalidInputError(f"{given} does not exist (or is not a file or folder); check the path")


def _walk(root: Path, include: Sequence[str], exclude: Sequence[str]) -> Iterator[Found]:
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        base = Path(folder)
        for name in sorted(files):
            path = base / name
            relative = path.relative_to(root).as_posix()
            if selected(relative, include, exclude) and path.is_file():
                yield Found(path, root)
