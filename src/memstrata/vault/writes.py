"""Agents write notes safely: create, append to a section, patch a section, move, and send to trash.

Every change to an existing note names the version it was based on; if the file changed since (a
person edited it in their editor, another agent wrote), the write is refused with
:class:`StaleVersionError` and nothing is written, so no one's edit is ever overwritten or merged
silently. Files are replaced atomically (a hidden temp file, fsync, rename), the version is checked
again just before the rename, and creations and moves never clobber an existing file. Rules files
are refused by every path here (see ``layout.note_path``).
"""

from __future__ import annotations

import datetime as dt
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.sentences import is_item_line
from memstrata.validation import check_strings, clean_text
from memstrata.vault.errors import StaleVersionError
from memstrata.vault.layout import TRASH, VaultLayout, checksum, version_of
from memstrata.vault.markdown import find_section, json_safe, parse_note, render_frontmatter, split_frontmatter


@dataclass(frozen=True)
class Written:
    """What a write changed on disk: the note's path now, and the one it had before a move."""

    path: str
    version: str
    moved_from: str | None = None


def _read(layout: VaultLayout, path: str) -> tuple[Path, bytes]:
    _, absolute = layout.note_path(path, for_write=True)
    try:
        return absolute, absolute.read_bytes()
    except FileNotFoundError:
        raise NotFoundError(f"no note {path} in the vault; `memstrata vault show` lists notes") from None


def _decoded(path: str, data: bytes) -> str:
    """A note's text for an edit. One that is not UTF-8 (saved as GBK by another editor) is refused: decoding it
    with replacement characters would write them back over the bytes the editor saved."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConflictError(
            f"{path} is not UTF-8 text (byte {exc.start} cannot be read); save it as UTF-8 (for example "
            f"`iconv -f GBK -t UTF-8`) before editing it here"
        ) from None


def _check(path: str, data: bytes, expected: str) -> None:
    current = version_of(checksum(data))
    if expected.strip().lower() != current:
        raise StaleVersionError(path, expected, current)


def _temp_beside(absolute: Path, data: bytes) -> Path:
    temp = absolute.with_name(f".{absolute.name}.{uuid.uuid4().hex[:8]}.tmp")  # hidden: no sync sees it
    with open(temp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return temp


def _replace(path: str, absolute: Path, data: bytes, expected: str) -> str:
    temp = _temp_beside(absolute, data)
    try:
        _check(path, absolute.read_bytes(), expected)  # again, right before the rename: a person may just have saved
        os.replace(temp, absolute)
    finally:
        temp.unlink(missing_ok=True)
    return version_of(checksum(data))


def _link_new(source: Path, target: Path, shown: str) -> None:
    """Put ``source`` at ``target`` only if nothing is there (a hard link cannot clobber)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except FileExistsError:
        raise ConflictError(f"{shown} already exists; choose another path, or edit that note instead") from None


def _text(value: str, field: str, max_chars: int) -> str:
    return clean_text(value, field=field, max_chars=max_chars)


def create(
    layout: VaultLayout, path: str, body: str, frontmatter: Mapping[str, Any] | None, *, max_chars: int, today: dt.date
) -> Written:
    """A new note; refused if the path is taken. ``created`` is added to the frontmatter when missing. A body that
    opens with its own frontmatter (a Markdown file as people write them) has it merged under ``frontmatter``,
    not buried in the text as a second block."""
    shown, absolute = layout.note_path(path, for_write=True)
    body = _text(body, "body", max_chars)
    own, problem, start = split_frontmatter(body)
    if problem:
        raise InvalidInputError(f"the body's {problem}; fix it, or pass the fields as frontmatter")
    check_strings(dict(frontmatter or {}), "frontmatter")  # a NUL was written to the file as "\0"
    front = json_safe({**own, **dict(frontmatter or {})})
    front.setdefault("created", today.isoformat())
    data = (render_frontmatter(front) + "\n" + body[start:].strip("\n") + "\n").encode()
    absolute.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_beside(absolute, data)
    try:
        _link_new(temp, absolute, shown)
    finally:
        temp.unlink(missing_ok=True)
    return Written(shown, version_of(checksum(data)))


def _splice(text: str, start: int, end: int, body: str) -> str:
    """Put ``body`` after a heading line (which ends at ``start``), one blank line before the next heading."""
    tail = text[end:]
    middle = f"\n{body.strip(chr(10))}\n" if body.strip() else ""
    return text[:start] + middle + ("\n" if tail else "") + tail


def append(layout: VaultLayout, path: str, text: str, expected: str, heading: str | None, *, max_chars: int) -> Written:
    """Add ``text`` at the end of a section's own text (before its subsections), or of the note."""
    absolute, data = _read(layout, path)
    _check(path, data, expected)
    addition = _text(text, "text", max_chars)
    current = _decoded(path, data)
    if heading is None:
        before = current.rstrip("\n")
        updated = before + _seam(before, addition) + addition + "\n"
    else:
        section = find_section(parse_note(current, path), heading)
        body = section.body(current)
        joined = f"{body}{_seam(body, addition)}{addition}" if body else addition
        updated = _splice(current, section.body_start, section.end, joined)
    return Written(path, _replace(path, absolute, updated.encode(), expected))


def _seam(before: str, addition: str) -> str:
    """A line break between an item and the next item of a list (or rows of a table), a blank line otherwise: a blank
    line before each appended item turned a tight list into a loose one."""
    last = before.rstrip("\n").rsplit("\n", 1)[-1]
    return "\n" if is_item_line(last) and is_item_line(addition) else "\n\n"


def patch(layout: VaultLayout, path: str, heading: str, text: str, expected: str, *, max_chars: int) -> Written:
    """Replace a section's own text (its heading and subsections stay) with ``text``."""
    absolute, data = _read(layout, path)
    _check(path, data, expected)
    current = _decoded(path, data)
    section = find_section(parse_note(current, path), heading)
    new_body = _text(text, "text", max_chars) if text.strip() else ""  # empty: the section keeps only its heading
    updated = _splice(current, section.body_start, section.end, new_body)
    return Written(path, _replace(path, absolute, updated.encode(), expected))


def move(layout: VaultLayout, path: str, target: str, expected: str) -> Written:
    """Rename a note (content unchanged, so sync sees a move and keeps its history and usage)."""
    absolute, data = _read(layout, path)
    _check(path, data, expected)
    shown, destination = layout.note_path(target, for_write=True)
    _link_new(absolute, destination, shown)
    if checksum(absolute.read_bytes()) != checksum(data):  # edited while we linked: leave both, say so
        destination.unlink()
        raise StaleVersionError(path, expected, version_of(checksum(absolute.read_bytes())))
    absolute.unlink()
    return Written(shown, version_of(checksum(data)), moved_from=path)


def trash(layout: VaultLayout, path: str, expected: str, now: dt.datetime) -> Written:
    """Move a note into the vault's ``.trash`` folder (Obsidian's): out of the index, still on disk."""
    absolute, data = _read(layout, path)
    _check(path, data, expected)
    destination = layout.root / TRASH / path
    if destination.exists():
        destination = destination.with_name(f"{destination.stem}.{now:%Y%m%d%H%M%S}{destination.suffix}")
    _link_new(absolute, destination, destination.relative_to(layout.root).as_posix())
    absolute.unlink()
    return Written(destination.relative_to(layout.root).as_posix(), version_of(checksum(data)), moved_from=path)
