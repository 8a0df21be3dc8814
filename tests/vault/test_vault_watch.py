"""Edits made by hand while the service runs: the watcher re-indexes them within seconds, and an agent
patch based on what it read before the edit is refused, not merged."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vault.vault_helpers import edit, make_vault

pytest.importorskip("watchfiles", reason="the watcher needs the server extra: pip install -e '.[server]'")

from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.vault import StaleVersionError, Vault
from memstrata.vault.watch import VaultWatcher

MEM0 = "agent-memory/notes/mem0.md"


def wait_for(check: Callable[[], bool], seconds: float = 15.0) -> float:
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > seconds:
            raise AssertionError(f"not true after {seconds} s")
        time.sleep(0.05)
    return time.monotonic() - started


@pytest.fixture
def watched(tmp_path: Path, embedder: UniversalSentenceEncoder) -> Iterator[tuple[Vault, VaultWatcher]]:
    db = tmp_path / "memstrata.db"
    memory = Memory(SQLiteStore(db), embedder, settings=load_settings({"store": {"path": str(db)}}))
    vault = make_vault(memory, tmp_path / "vault", watch_debounce_ms=100)
    vault.init(example=True)
    with VaultWatcher(vault) as watcher:
        wait_for(watcher.ready.is_set)
        yield vault, watcher
    memory.close()


def test_a_hand_edit_is_searchable_within_seconds_and_a_stale_patch_is_refused(
    watched: tuple[Vault, VaultWatcher],
) -> None:
    vault, watcher = watched
    assert watcher.last_report is not None and watcher.last_report.new == 9  # the initial catch-up sync
    read = vault.show(MEM0)  # an agent reads the note ...
    edit(
        vault.layout.root / MEM0, "decides ADD, UPDATE, DELETE or NONE", "决定新增、修改、删除或保持不变，再写回向量库"
    )
    took = wait_for(lambda: any(h.path == MEM0 for h in vault.search("再写回向量库", limit=3)))
    assert took < 5.0
    with pytest.raises(StaleVersionError, match="changed since version"):  # ... and patches after the person's edit
        vault.patch(MEM0, "Idea 思路", "the agent's version of the idea", version=read.version)
    assert "再写回向量库" in (vault.layout.root / MEM0).read_text(encoding="utf-8")
    assert watcher.last_error is None


def test_new_renamed_and_deleted_files_are_followed(watched: tuple[Vault, VaultWatcher]) -> None:
    vault, _ = watched
    root = vault.layout.root
    (root / "agent-memory/notes/rag.md").write_text("# RAG\n\n检索增强生成，先检索再回答。\n", encoding="utf-8")
    wait_for(lambda: bool(vault.search("先检索再回答", limit=1)))
    (root / "agent-memory/notes/rag.md").rename(root / "agent-memory/rag.md")
    wait_for(lambda: [h.path for h in vault.search("先检索再回答", limit=1)] == ["agent-memory/rag.md"])
    (root / "agent-memory/rag.md").unlink()
    wait_for(lambda: all(h.path != "agent-memory/rag.md" for h in vault.search("先检索再回答")))
    (root / "rules/general.md").write_text("# changed rules\n", encoding="utf-8")  # rules are not notes
    time.sleep(0.5)
    assert all(not h.path.startswith("rules/") for h in vault.search("changed rules"))
