"""Hard deletes: purging memories, erasing everything about a scope, and counting what is left (the proof).

The embedding cache is keyed by text hash and shared by every scope, so it cannot be erased by scope.
Every text the erased rows ever had (each version of each memory, as stored and as indexed, history's old
and new texts, raw turns, entity names and aliases) is hashed and its cached vectors are deleted under
every model. A text another scope also has loses its cache entry too: that costs the other scope one
re-embedding, where keeping it would leave a derivative of the erased user's words behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memstrata.errors import StoreError
from memstrata.indexing import index_text, text_hash
from memstrata.storage.sql import rows
from memstrata.storage.sql.dialect import Dialect, Tx
from memstrata.storage.sql.graph import vector_bytes
from memstrata.storage.sql.rows import MEMORY_COLUMNS
from memstrata.storage.sql.where import scope_where
from memstrata.types import MemoryItem, Scope

# Tables holding scope columns directly; memory_vectors (and SQLite's keyword index) hang off memories.seq.
_SCOPED_TABLES = ("messages", "history", "jobs", "kv_facts", "entities", "relations", "process_tasks", "process_steps",
                  "process_hypotheses", "process_artifacts", "process_strategies", "knowledge_sources")  # fmt: skip


def delete_in(d: Dialect, tx: Tx, table: str, column: str, values: Sequence[object]) -> int:
    if not values:
        return 0
    condition, params = d.in_(column, list(values))
    return tx.execute(f"DELETE FROM {table} WHERE {condition}", params).rowcount


def _texts(tx: Tx, sql: str, params: Sequence[object]) -> Iterable[str]:
    return (text for row in tx.execute(sql, params).fetchall() for text in row if isinstance(text, str))


def _forget_texts(d: Dialect, tx: Tx, texts: Iterable[str], tenant_id: str | None) -> int:
    """Cached embeddings of the tenant's ``texts`` gone: the cache rows, and the mark on memory vectors that double
    as the cache (another scope's memory keeps its vector for search, but no longer answers for the text)."""
    digests = sorted({text_hash(text, tenant_id) for text in texts})
    if not digests:
        return 0
    condition, params = d.in_("text_hash", digests)
    unmarked = tx.execute(f"UPDATE memory_vectors SET text_hash = NULL WHERE {condition}", params).rowcount
    return delete_in(d, tx, "embedding_cache", "text_hash", digests) + unmarked


def _memory_texts(items: Iterable[MemoryItem]) -> Iterable[str]:
    return (text for item in items for text in (item.text, index_text(item)))


def _keep_as_cache(d: Dialect, tx: Tx, seqs: Sequence[int]) -> None:
    """A memory's vector is the cached embedding of its text (one copy): move it into the cache before the row
    goes, so the same text embeds again for free."""
    condition, params = d.in_("memory_seq", list(seqs))
    held = tx.execute(
        f"SELECT embedding_id, text_hash, {d.vector_column} FROM memory_vectors "
        f"WHERE {condition} AND text_hash IS NOT NULL",
        params,
    ).fetchall()
    tx.executemany(
        "INSERT INTO embedding_cache (embedding_id, text_hash, vector) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        [(embedding_id, digest, vector_bytes(d.from_vector(vector))) for embedding_id, digest, vector in held],
    )


def purge_rows(d: Dialect, tx: Tx, scope: Scope, memory_ids: Sequence[str], *, keep_embeddings: bool = False) -> int:
    """Hard delete of memories: rows, vectors (cascade), keyword entries, keys, history, and (unless
    ``keep_embeddings``) the cached embeddings of their texts."""
    where = scope_where(d, scope, "m")
    condition, params = d.in_("m.id", list(memory_ids))
    found = tx.execute(
        f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE {condition} AND {where.sql()}{d.for_update}",
        (*params, *where.params),
    ).fetchall()
    if not found:
        return 0
    ids = [row[1] for row in found]
    condition, params = d.in_("memory_id", ids)
    history = _texts(tx, f"SELECT old_text, new_text FROM history WHERE {condition}", params)
    if keep_embeddings:
        _keep_as_cache(d, tx, [row[0] for row in found])
    else:
        texts = [*_memory_texts(rows.memory(d, tuple(row)[1:]) for row in found), *history]
        _forget_texts(d, tx, texts, scope.tenant_id)
    d.drop_memories(tx, [row[0] for row in found])
    delete_in(d, tx, "kv_facts", "memory_id", ids)
    delete_in(d, tx, "history", "memory_id", ids)
    return delete_in(d, tx, "memories", "seq", [row[0] for row in found])


def erase_scope_rows(d: Dialect, tx: Tx, scope: Scope) -> dict[str, int]:
    """As the caller's whole transaction: delete every row about ``scope``; rows deleted per table. It sees one
    snapshot throughout, and refuses to commit unless that snapshot holds nothing about the scope afterwards;
    rows that other writers commit meanwhile are theirs and stay whole."""
    d.snapshot(tx)
    where = scope_where(d, scope, "m")
    found = tx.execute(
        f"SELECT m.seq, {MEMORY_COLUMNS} FROM memories m WHERE {where.sql()}{d.for_update}", where.params
    ).fetchall()
    seqs = [row[0] for row in found]
    texts = list(_memory_texts(rows.memory(d, tuple(row)[1:]) for row in found))
    for sql in ("SELECT old_text, new_text FROM history m", "SELECT content FROM messages m"):
        texts.extend(_texts(tx, f"{sql} WHERE {where.sql()}", where.params))
    for name, aliases in tx.execute(
        f"SELECT name, aliases FROM entities m WHERE {where.sql()}", where.params
    ).fetchall():
        texts.extend([name, *d.from_json(aliases)])
    deleted = {"embedding_cache": _forget_texts(d, tx, texts, scope.tenant_id), **d.drop_memories(tx, seqs)}
    deleted["memory_vectors"] = delete_in(d, tx, "memory_vectors", "memory_seq", seqs)
    deleted["memories"] = delete_in(d, tx, "memories", "seq", seqs)
    for table in _SCOPED_TABLES:
        table_where = scope_where(d, scope, table)
        deleted[table] = tx.execute(f"DELETE FROM {table} WHERE {table_where.sql()}", table_where.params).rowcount
    remaining = {table: count for table, count in count_scope_rows(d, tx, scope).items() if count}
    if remaining:
        raise StoreError(f"erasing {scope} left rows behind: {remaining}; nothing was erased, try again")
    return deleted


def count_scope_rows(d: Dialect, tx: Tx, scope: Scope) -> dict[str, int]:
    where = scope_where(d, scope, "t")
    counts = {}
    for table in ("memories", *_SCOPED_TABLES):
        counts[table] = int(
            tx.execute(f"SELECT COUNT(*) FROM {table} t WHERE {where.sql()}", where.params).fetchone()[0]
        )
    vectors = tx.execute(
        f"SELECT COUNT(*) FROM memory_vectors v JOIN memories t ON t.seq = v.memory_seq WHERE {where.sql()}",
        where.params,
    ).fetchone()
    counts["memory_vectors"] = int(vectors[0])
    return counts
