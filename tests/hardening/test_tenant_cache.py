"""The embedding cache is per tenant: a text one tenant stored never answers another tenant from the cache, so
neither a cache hit (``embedded_from_cache``) nor its speed tells one tenant what another holds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memstrata import Memory
from memstrata.indexing import text_hash
from memstrata.providers.protocol import Embedder
from memstrata.storage.protocol import WriteBatch
from memstrata.storage.sqlite.store import SQLiteStore

SECRET = "Acme's merger with Globex closes on 3 March; 代号是紫色海豚。"


def _upload(memory: Memory, folder: Path, name: str) -> int:
    path = folder / name
    path.write_text(f"# Notes\n\n{SECRET}\n", encoding="utf-8")
    report = memory.knowledge.ingest(path, collection="notes", user_id="analyst")
    assert report.embedded > 0
    return report.embedded_from_cache


def test_another_tenants_text_is_embedded_afresh_and_the_own_tenants_comes_from_the_cache(
    memory: Memory, tmp_path: Path
) -> None:
    acme, globex = memory.for_tenant("acme"), memory.for_tenant("globex")
    assert _upload(acme, tmp_path, "acme.md") == 0
    assert _upload(globex, tmp_path, "globex.md") == 0  # another tenant: nothing from acme's cache
    assert _upload(memory, tmp_path, "default.md") == 0  # nor for the default tenant
    assert _upload(acme, tmp_path, "acme-again.md") >= 1  # the same tenant's chunk vectors double as its cache


def test_the_default_tenant_keeps_the_plain_hash_and_a_named_tenant_hashes_with_its_id() -> None:
    assert text_hash("x") == text_hash("x", None) == text_hash("x", "")
    assert len({text_hash("x"), text_hash("x", "acme"), text_hash("x", "globex")}) == 3


def test_an_old_store_forgets_the_plain_hashes_of_named_tenants(tmp_path: Path, embedder: Embedder) -> None:
    """Hashes written before tenants were hashed in are plain: the upgrade drops those a named tenant wrote."""
    path = tmp_path / "m.db"
    memory = Memory(SQLiteStore(path), embedder)
    memory.for_tenant("acme").add(SECRET, user_id="ceo", infer=False)
    memory.add(SECRET, user_id="me", infer=False)
    memory.close()
    conn = sqlite3.connect(path)
    with conn:  # as a store before the upgrade held them: plain hashes, and a cache row naming no tenant
        conn.execute("UPDATE memory_vectors SET text_hash = ?", (text_hash(SECRET),))
        conn.execute("INSERT INTO embedding_cache VALUES ('any', ?, x'00')", (text_hash("old"),))
        conn.execute("DELETE FROM schema_migrations WHERE version >= 9")  # step 9 and every later one run again
        conn.execute("ALTER TABLE memories DROP COLUMN words")  # which step 11 added
    conn.close()

    store = SQLiteStore(path)
    try:
        identity = store.embedding_id()
        assert identity is not None
        assert store.cached_vectors(identity, [text_hash(SECRET)]) != {}  # the default tenant's own row
        conn = sqlite3.connect(path)
        held = conn.execute(
            "SELECT m.tenant_id, v.text_hash IS NOT NULL FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq"
        ).fetchall()
        assert sorted(held) == [("", 1), ("acme", 0)]
        assert conn.execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0] == 0
        conn.close()
    finally:
        store.close()


def test_erasing_a_named_tenants_user_forgets_the_texts_in_that_tenants_cache(memory: Memory) -> None:
    acme = memory.for_tenant("acme")
    acme.add(SECRET, user_id="ceo", infer=False)
    identity = memory.store.embedding_id()
    assert identity is not None
    digest = text_hash(SECRET, "acme")
    vector = memory.store.cached_vectors(identity, [digest])[digest]
    memory.store.write(WriteBatch(cache_entries=[(digest, vector)], embedding_id=identity))  # a cache row as well
    acme.add(SECRET, user_id="cfo", infer=False)
    acme.erase_user("ceo", confirm=True)
    assert memory.store.cached_vectors(identity, [digest]) == {}
    assert acme.search("紫色海豚", user_id="cfo")  # cfo's memory stays searchable
