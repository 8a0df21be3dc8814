"""Ingestion at corpus scale: throughput in pages/s and peak memory on a generated bilingual corpus.

The corpus: PDFs (one page per section, Chinese and English) and PowerPoint decks (one slide per
section), written once under ``bench/.cache/ingest-corpus-<pages>`` and reused. Three runs through the
public API (``Memory.ingest`` on a fresh SQLite store, structure chunker, the bundled embedder):

1. first ingestion: pages/s, chunks, seconds, and peak RSS of this process and of the conversion child
   (``ru_maxrss`` of self and of waited-for children) next to the corpus' size on disk and as Markdown,
   which shows the corpus is streamed, never held whole;
2. the same folder again: nothing converted or embedded (``embedded`` must be 0);
3. one file changed: only that file is converted, chunked and embedded.

    python -m bench.ingest_bench [--pages 1000] [--pages-per-doc 20]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.chunk_docs import Document, Section, write
from bench.chunkers import FILLER
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.knowledge.progress import NullProgress
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore

RESULTS = Path(__file__).resolve().parent / "results"
CACHE = Path(__file__).resolve().parent / ".cache"


class FileBar(NullProgress):
    """A tqdm bar over files, pages and chunks for a long run."""

    def __init__(self) -> None:
        self.bar: tqdm[Any] | None = None
        self.pages = 0
        self.chunks = 0

    def start(self, files: int) -> None:
        self.bar = tqdm(total=files, unit="file", desc="ingest")

    def converted(self, pages: int) -> None:
        self.pages += pages

    def chunked(self, chunks: int) -> None:
        self.chunks += chunks

    def file_done(self) -> None:
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(pages=self.pages, chunks=self.chunks)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()


def build_corpus(folder: Path, pages: int, per_doc: int, seed: int = 11) -> dict[str, Any]:
    """PDFs and decks of ``per_doc`` pages each until ``pages``; written once, reused when present."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    written, number = 0, 0
    with tqdm(total=pages, unit="page", desc="corpus") as bar:
        while written < pages:
            lang, fmt = ("zh", "en")[number % 2], ("pdf", "pdf", "pptx")[number % 3]
            count = min(per_doc, pages - written)
            path = folder / f"{lang}-{number:04}.{fmt}"
            if not path.exists():
                sections = []
                for page in range(count):
                    lines = [line.format(y=rng.randint(2015, 2024)) for line in rng.choices(FILLER[lang], k=16)]
                    heading = f"第{page + 1}节" if lang == "zh" else f"Section {page + 1}"
                    sections.append(Section(heading, tuple(lines)))
                title = f"{'手册' if lang == 'zh' else 'Manual'} {number}"
                write(Document(title, tuple(sections), lang=lang), folder, path.stem, fmt)
            written += count
            number += 1
            bar.update(count)
    files = sorted(folder.iterdir())
    return {"files": len(files), "pages": pages, "bytes": sum(f.stat().st_size for f in files)}


def _peak_mb() -> dict[str, float]:
    return {
        "self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def _run(memory: Memory, folder: Path, label: str) -> dict[str, Any]:
    started = time.perf_counter()
    report = memory.ingest(folder, collection="bench", user_id="bench", progress=FileBar())
    seconds = time.perf_counter() - started
    summary = report.summary()
    return {
        "run": label, **{k: summary[k] for k in ("added", "replaced", "unchanged", "failed", "pages", "chunks",
                                                 "embedded", "embedded_from_cache")},
        "seconds": round(seconds, 2), "pages_per_s": round(summary["pages"] / seconds, 2) if summary["pages"] else None,
        **{k: round(v, 1) for k, v in _peak_mb().items()},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--pages-per-doc", type=int, default=20)
    args = parser.parse_args()
    folder = CACHE / f"ingest-corpus-{args.pages}-{args.pages_per_doc}"
    corpus = build_corpus(folder, args.pages, args.pages_per_doc)
    embedder = UniversalSentenceEncoder()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ingest.db"
        memory = Memory(SQLiteStore(db), embedder, settings=load_settings({"store": {"path": str(db)}}))
        with memory:
            runs.append(_run(memory, folder, "first ingestion"))
            markdown_chars = sum(len(memory.knowledge.source("bench", s.source, user_id="bench").markdown)
                                 for s in memory.knowledge.sources("bench", user_id="bench"))  # fmt: skip
            runs.append(_run(memory, folder, "unchanged again"))
            changed = sorted(folder.glob("*.pdf"))[0]
            original = changed.read_bytes()
            try:
                changed.write_bytes(sorted(folder.glob("*.pdf"))[1].read_bytes())  # another document's bytes
                runs.append(_run(memory, folder, "one file changed"))
            finally:
                changed.write_bytes(original)
            db_mb = sum(part.stat().st_size for part in Path(tmp).glob("ingest.db*")) / 1024 / 1024
    result = {
        "suite": "ingest", "date": time.strftime("%Y-%m-%d"), "machine": {"python": platform.python_version(),
        "cpus": __import__("os").cpu_count(), "platform": platform.platform()},
        "corpus": {**corpus, "markdown_chars": markdown_chars}, "database_mb": round(db_mb, 1), "runs": runs,
    }  # fmt: skip
    RESULTS.mkdir(exist_ok=True)
    stem = RESULTS / f"{result['date']}-ingest-{args.pages}p"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


def markdown(result: dict[str, Any]) -> str:
    corpus = result["corpus"]
    lines = [
        f"# Ingestion at corpus scale ({result['date']})",
        "",
        f"Corpus: {corpus['files']} files (PDF and PPTX, zh/en), {corpus['pages']} pages, "
        f"{corpus['bytes'] / 1024 / 1024:.1f} MB on disk, {corpus['markdown_chars']:,} characters of Markdown. "
        f"Store after the runs: {result['database_mb']} MB. Machine: {result['machine']['cpus']} CPUs (shared), "
        f"Python {result['machine']['python']}. Structure chunker, 256 tokens, bundled embedder, SQLite.",
        "",
        "| run | added | replaced | unchanged | pages | chunks | embedded | seconds | pages/s | peak RSS self MB "
        "| peak RSS converter MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in result["runs"]:
        lines.append(
            f"| {run['run']} | {run['added']} | {run['replaced']} | {run['unchanged']} | {run['pages']} | "
            f"{run['chunks']} | {run['embedded']} | {run['seconds']} | {run['pages_per_s'] or '-'} | "
            f"{run['self_mb']} | {run['children_mb']} |"
        )
    lines += [
        "",
        "Peak RSS is the high-water mark of the process so far (it never goes down between rows). The corpus is "
        "streamed: one document's Markdown and chunks are in memory at a time, each written in its own "
        "transaction, so memory does not grow with the corpus. The unchanged run converts and embeds nothing.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
