"""Vault fixtures: the bundled bilingual example, indexed into a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.vault import Vault
from vault.vault_helpers import EXAMPLE_NOTES, make_vault


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
