"""What importing memstrata loads: the vault, document ingestion and the clients of remote models are imported when
first used, so a process that never uses them does not hold their modules (httpx, Markdown and YAML parsers: ~10 MB
of every serving worker and CLI command)."""

from __future__ import annotations

import subprocess
import sys

DEFERRED = ("httpx", "yaml", "markdown_it", "memstrata.vault.vault", "memstrata.knowledge.convert",
            "memstrata.knowledge.media", "memstrata.facade.knowledge", "spellchecker.spellchecker")  # fmt: skip


def test_memory_and_the_sqlite_store_import_no_optional_subsystem() -> None:
    code = (
        "import sys\n"
        "from memstrata import Memory\n"
        "from memstrata.storage.sqlite.store import SQLiteStore\n"
        f"print(sorted(name for name in {DEFERRED!r} if name in sys.modules))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert found.stdout.strip() == "[]", found.stdout


def test_the_deferred_subsystems_still_load_on_first_use() -> None:
    from memstrata.knowledge import Ingestor, plan
    from memstrata.vault import Vault

    assert callable(plan) and Ingestor.__name__ == "Ingestor" and Vault.__name__ == "Vault"
