"""A crash in the middle of an ingestion (kill -9 of a real ``memstrata ingest`` process) leaves nothing
partial: every live source has exactly its own chunks live, every live chunk has its live source, and
the next run resumes: the documents written before the crash are unchanged, only the rest are added."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import memstrata
from memstrata.config import StoreSettings
from memstrata.query import Filters, ListQuery
from memstrata.storage.factory import open_store
from memstrata.types import Scope

FILES = 150
SCOPE = Scope(user_id="crash")


def _corpus(folder: Path) -> None:
    folder.mkdir()
    for number in range(FILES):
        paragraphs = [f"# 文档 {number}\n"] + [
            f"## Section {part}\n\nDocument {number} part {part}: the code for locker {number}-{part} is "
            f"{number * 7 + part}. 第{part}节说明储物柜{number}-{part}的密码。\n"
            for part in range(6)
        ]
        (folder / f"doc-{number:03}.md").write_text("\n".join(paragraphs), encoding="utf-8")


def _cli(db: Path, folder: Path) -> list[str]:
    return [sys.executable, "-m", "memstrata", "--db", str(db), "--json", "ingest", str(folder), "-c", "lockers",
            "--user", "crash", "--chunker", "fixed", "--size", "64", "--overlap", "0"]  # fmt: skip


def _sources_written(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM knowledge_sources").fetchone()[0])
    except sqlite3.Error:  # not created yet, or the schema is being written
        return 0


def _consistent(db: Path) -> int:
    """Checks the invariants; returns the number of live sources."""
    store = open_store(StoreSettings(path=str(db)))
    try:
        sources = {s.source: s for s in store.knowledge.sources(SCOPE, "lockers")}
        chunks = store.list_memories(ListQuery(scope=SCOPE, filters=Filters(kind=("knowledge",)), limit=10_000))
        by_source: dict[str, list[int]] = {}
        for chunk in chunks:
            by_source.setdefault(str(chunk.metadata["source"]), []).append(int(chunk.metadata["chunk"]))
            assert chunk.metadata["source_hash"] == sources[str(chunk.metadata["source"])].source_hash
        assert set(by_source) == set(sources)  # no chunk without its source, no source without chunks
        for name, summary in sources.items():
            assert sorted(by_source[name]) == list(range(summary.chunks)), name  # whole documents only
        return len(sources)
    finally:
        store.close()


def test_kill_9_mid_ingest_leaves_whole_documents_and_the_next_run_resumes(tmp_path: Path) -> None:
    folder, db = tmp_path / "docs", tmp_path / "crash.db"
    _corpus(folder)
    # The child runs this checkout's memstrata (the tests run in a temporary cwd, so a relative path won't do).
    source_root = str(Path(memstrata.__file__).resolve().parents[1])
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": source_root}
    process = subprocess.Popen(_cli(db, folder), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + 300
    while _sources_written(db) < 5 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, "the run ended before it could be killed: make the corpus larger"

    before = _consistent(db)
    assert 0 < before < FILES

    resumed = subprocess.run(_cli(db, folder), capture_output=True, text=True, env=env, timeout=600, check=False)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads(resumed.stdout)["summary"]
    assert summary["unchanged"] == before and summary["added"] == FILES - before and summary["failed"] == 0
    assert _consistent(db) == FILES
