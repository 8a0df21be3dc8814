"""Which files a run takes: include/exclude globs, hidden and lock files, unsupported types reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.errors import InvalidInputError
from memstrata.knowledge.walk import discover


def _tree(root: Path) -> None:
    for relative in [
        "a.pdf", "b.md", "notes/c.docx", "notes/drafts/d.md", ".hidden/e.md", "notes/~$lock.docx", ".f.txt",
        "node_modules/x/g.md",
    ]:  # fmt: skip
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


def _names(root: Path, **kwargs: tuple[str, ...]) -> list[str]:
    return [found.path.relative_to(root).as_posix() for found in discover([root], **kwargs)]


def test_defaults_skip_hidden_lock_and_tool_folders(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _names(tmp_path) == ["a.pdf", "b.md", "notes/c.docx", "notes/drafts/d.md"]


def test_include_and_exclude_globs(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _names(tmp_path, include=("*.md",)) == ["b.md", "notes/drafts/d.md"]
    assert _names(tmp_path, include=("notes/*",), exclude=("*/drafts/*", ".*", "~$*")) == ["notes/c.docx"]
    assert ".hidden/e.md" in _names(tmp_path, exclude=())  # explicit excludes replace the defaults


def test_a_named_file_is_taken_and_a_missing_path_is_an_error(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert [f.path for f in discover([tmp_path / ".f.txt"])] == [tmp_path / ".f.txt"]
    with pytest.raises(InvalidInputError, match="does not exist"):
        list(discover([tmp_path / "nope"]))
