"""Helpers shared by the vault tests."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory
from memstrata.vault import Vault, VaultSettings

EXAMPLE_NOTES = 9  # agent-memory: 5 layer files and 4 atomic notes


def make_vault(memory: Memory, root: Path, **settings: object) -> Vault:
    return Vault(memory, VaultSettings.model_validate({"path": str(root), **settings}))


def edit(path: Path, old: str, new: str) -> None:
    """A person's edit in their editor: the file is rewritten in place."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")
