"""The rules layer: verbatim, in a stable order (configured files, shared, then the agent's own), and
re-read when a file changes, without a restart."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.errors import InvalidInputError
from memstrata.vault import Vault
from vault.vault_helpers import make_vault


def test_rules_come_verbatim_in_a_stable_order(vault: Vault, vault_root: Path) -> None:
    (vault_root / "rules/00-first.md").write_text("先读这一条。\n", encoding="utf-8")
    shared = vault.rules()
    assert [(r.path, r.applies_to) for r in shared.files] == [("rules/00-first.md", "all"), ("rules/general.md", "all")]
    assert shared.files[1].text == (vault_root / "rules/general.md").read_text(encoding="utf-8")
    assert shared.text.startswith("<!-- rules: rules/00-first.md -->\n先读这一条。\n")
    mine = vault.rules("researcher")
    assert [r.path for r in mine.files][-1] == "rules/researcher/style.md"
    assert mine.files[-1].applies_to == "agent:researcher"
    assert vault.rules("../rules") == shared  # an agent id is never a path out of the rules folder


def test_configured_files_come_first(memory: Memory, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Project rules\n\nUse Hono, not Express.\n", encoding="utf-8")
    vault = make_vault(memory, tmp_path / "v", rules_files=[str(project / "AGENTS.md")])
    vault.init(example=True)
    block = vault.rules()
    assert block.files[0].path == str((project / "AGENTS.md").resolve())
    assert "Use Hono, not Express." in block.text.split("<!-- rules: rules/general.md -->")[0]
    missing = make_vault(memory, tmp_path / "v", rules_files=["nope/CLAUDE.md"])
    with pytest.raises(InvalidInputError, match="does not exist"):
        missing.rules()


def test_a_changed_rules_file_shows_up_without_restart(vault: Vault, vault_root: Path) -> None:
    path = vault_root / "rules/general.md"
    first = vault.rules()
    path.write_text("# Rules\n\n- Reply in haiku.\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # even within one mtime tick
    second = vault.rules()
    assert "Reply in haiku." in second.text and second.files[0].checksum != first.files[0].checksum
    (vault_root / "rules/general.md").unlink()
    assert vault.rules().files == ()


def test_rules_need_no_vault_folder(memory: Memory, tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("Be kind.\n", encoding="utf-8")
    rules_only = Vault(memory, make_vault(memory, tmp_path).settings.model_copy(
        update={"path": None, "rules_files": [str(tmp_path / "CLAUDE.md")]}))  # fmt: skip
    assert rules_only.rules().files[0].text == "Be kind.\n"
    with pytest.raises(InvalidInputError, match="no vault is configured"):
        rules_only.sync()


def test_an_agent_id_is_read_as_scope_ids_are(vault: Vault, vault_root: Path) -> None:
    """A user trial: rules(" coder ") gave the shared rules alone, where the scope id " coder " is coder."""
    (vault_root / "rules" / "coder").mkdir(parents=True, exist_ok=True)
    (vault_root / "rules" / "coder" / "style.md").write_text("Use type hints.\n", encoding="utf-8")
    assert "Use type hints." in vault.rules(" coder ").text
    assert "Use type hints." not in vault.rules("coder/..").text  # never a path: no rules of its own
