"""Vault fixtures: the bundled bilingual example, indexed into a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.vault import Vault, VaultSettings

EXAMPLE_NOTES = 9  # agent-memory: 5 layer files and 4 atomic notes


def make_vault(memory: Memory, root: Path, **settings: object) -> Vault:
    return Vault(memory, VaultSettings(path=str(root), **settings))  # type: ignore[arg-type]


@pytest.fixture
def vault_root(tmp_path: Path) -> Path:
    return tmp_path / "vault"


@pytest.fixture
def vault(memory: Memory, vault_root: Path) -> Vault:
    made = make_vault(memory, vault_root)
    made.init(example=True)
    report = made.sync()
    assert report.new == EXAMPLE_NOTES and not report.warnings
    return made


def edit(path: Path, old: str, new: str) -> None:
    """A person's edit in their editor: the file is rewritten in place."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")
