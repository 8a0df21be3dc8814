"""The vault on disk: which files are notes, which are rules, which layer a note belongs to, and
turning a caller's path into a safe one inside the vault.

Seed 000's layers: basic context (basic_info.md, taxonomy.md), cognition (main_challenge.md,
network.md), alignment (human_preference.md) and atomic notes (everything else, told apart by the
frontmatter tag: method, benchmark, survey, blog or any tag of the user's). A domain is a top-level
folder; the layer files may sit anywhere inside it (``Basic_Context/basic_info.md`` works too).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from memstrata.errors import InvalidInputError
from memstrata.patterns import lazy_pattern
from memstrata.types import string_problem
from memstrata.vault.errors import ReadOnlyRulesError

log = logging.getLogger(__name__)

Layer = Literal["basic", "cognition", "alignment", "atomic"]
LAYER_FILES: dict[str, Layer] = {
    "basic_info.md": "basic",
    "taxonomy.md": "basic",
    "main_challenge.md": "cognition",
    "network.md": "cognition",
    "human_preference.md": "alignment",
}
# Rules files by their usual names are read-only wherever they sit, even outside the rules folder.
RULES_NAMES = frozenset({"agents.md", "claude.md", ".cursorrules", "gemini.md"})
TRASH = ".trash"  # Obsidian's own trash folder: forgotten notes go there, never straight to deletion


def resolve_file(root: Path | None, name: str) -> Path:
    """A configured file: absolute (or ~) as given, otherwise relative to the vault folder."""
    path = Path(name).expanduser()
    if not path.is_absolute():
        if root is None:
            raise InvalidInputError(f"{name!r} is a relative path, but no vault.path is set to resolve it against")
        path = root / path
    return path.resolve()


def layer_of(path: str) -> Layer:
    return LAYER_FILES.get(PurePosixPath(path).name.lower(), "atomic")


def domain_of(path: str) -> str:
    parts = PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else ""


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def version_of(digest: str) -> str:
    """What agents see and send back as a note's version: the first 16 hex digits of its checksum."""
    return digest[:16]


NAME_MAX = 240  # bytes of one file or folder name: Linux's 255, less room for the temporary name beside a write
PATH_MAX = 3000  # bytes of a note path inside the vault (Linux: 4,096 for the whole path, the vault's own included)
_CONTROL = lazy_pattern(r"[\x00-\x1f\x7f]")
_DRIVE = lazy_pattern(r"[A-Za-z]:")


@dataclass(frozen=True)
class VaultLayout:
    root: Path
    rules_dir: str
    rules_files: tuple[Path, ...]

    def rules_root(self) -> Path:
        return self.root / self.rules_dir

    def is_rules(self, path: Path) -> bool:
        """True for every file of the rules layer, which no write path may touch."""
        resolved = path.resolve()
        if resolved.name.lower() in RULES_NAMES or resolved in self.rules_files:
            return True
        return resolved.is_relative_to(self.rules_root().resolve())

    def note_path(self, relative: str, *, for_write: bool = False) -> tuple[str, Path]:
        """A caller's note path, normalised to POSIX form and checked to stay inside the vault."""
        problem = string_problem(relative)
        if problem:  # a NUL or a lone surrogate: no file system takes it (os calls raised, HTTP 500)
            raise InvalidInputError(f"note path {relative!r} {problem}")
        if _CONTROL.search(relative):  # a line break in a file name: legal on Linux, a trap everywhere else
            raise InvalidInputError(f"note path {relative!r} holds a control character (a line break, a tab); "
                                    "remove it")  # fmt: skip
        # One spelling per note: "dom//X.md" and "dom/./X.md" were stored as given and indexed beside "dom/X.md".
        cleaned = PurePosixPath(relative.strip().replace("\\", "/").lstrip("/")).as_posix()
        cleaned = "" if cleaned == "." else cleaned
        parts = PurePosixPath(cleaned).parts
        long = [part for part in parts if len(part.encode("utf-8")) > NAME_MAX]
        if long or len(cleaned.encode("utf-8")) > PATH_MAX:
            raise InvalidInputError(f"note path {relative[:80]!r}... is too long for the file system: at most "
                                    f"{NAME_MAX} bytes a name and {PATH_MAX} in all (UTF-8); shorten it")  # fmt: skip
        drive = bool(parts) and _DRIVE.fullmatch(parts[0]) is not None  # "C:\\x.md" made a domain called "C:"
        if not cleaned or drive or any(part in ("..", ".") for part in parts) or Path(relative).is_absolute():
            raise InvalidInputError(
                f"{relative!r} is not a note path; use a path inside the vault like 'domain/note.md'"
            )
        if any(part.startswith(".") for part in parts):
            raise InvalidInputError(f"{relative!r} is inside a hidden folder; notes live in visible folders")
        if not cleaned.lower().endswith(".md"):
            raise InvalidInputError(f"{relative!r} is not a Markdown note; note paths end in .md")
        absolute = self.root / cleaned
        if not absolute.resolve().is_relative_to(self.root):
            raise InvalidInputError(f"{relative!r} points outside the vault (through a link); use a path inside it")
        if for_write and self.is_rules(absolute):
            raise ReadOnlyRulesError(cleaned)
        if for_write and any(part != part.strip() for part in parts):  # "dom/ x.md" beside "dom/x.md": two notes
            raise InvalidInputError(f"{relative!r} has a folder or file name that starts or ends with a space; "
                                    "remove the space")  # fmt: skip
        if for_write and len(parts) < 2:  # a domain is a top-level folder: a note at the root belongs to none
            raise InvalidInputError(f"{relative!r} is at the vault's root; notes live in a domain folder, like "
                                    f"'research/{parts[-1]}'")  # fmt: skip
        return cleaned, absolute

    def walk(self) -> Iterator[tuple[str, Path]]:
        """Every note: ``*.md`` outside hidden folders and the rules layer, in a stable order."""
        if not self.root.is_dir():
            raise InvalidInputError(f"the vault folder {self.root} does not exist; create it or fix vault.path")
        rules_root = self.rules_root().resolve()
        for folder, dirs, files in os.walk(self.root):
            here = Path(folder)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and (here / d).resolve() != rules_root)
            for name in sorted(files):
                if name.lower().endswith(".md") and not name.startswith(".") and name.lower() not in RULES_NAMES:
                    absolute = here / name
                    if not self.inside(absolute):
                        continue
                    yield absolute.relative_to(self.root).as_posix(), absolute

    def inside(self, absolute: Path) -> bool:
        """Whether the file is inside the vault once links are followed. A link to a file outside was indexed by
        sync, and searched through REST and the console, while reading it was refused (a user trial)."""
        if absolute.resolve().is_relative_to(self.root):
            return True
        log.warning("skipping %s: it links to a file outside the vault", absolute)
        return False

    def is_note(self, absolute: Path) -> bool:
        try:
            relative = absolute.relative_to(self.root)
        except ValueError:
            return False
        return (
            absolute.name.lower().endswith(".md")
            and not any(part.startswith(".") for part in relative.parts)
            and not self.is_rules(absolute)
            and self.inside(absolute)
        )
