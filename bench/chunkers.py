"""Chunker comparison on a generated bilingual document-QA set: evidence recall@5, cost, throughput.

The set: documents in Chinese and English written as real docx/pptx/pdf/html/xlsx files (see
``chunk_docs.py``), each with sections of varied filler prose and one planted fact per section
plus the question that asks for it. Every document is converted once through the sandboxed
MarkItDown path; then each chunker cuts every document, the chunks are embedded and stored in a fresh
SQLite memory, and each question is searched among that collection's knowledge.

Reported per chunker: evidence recall@5 (a hit when one of the top five chunks contains the whole
planted sentence), chunks and tokens per document, chunking seconds per page, model calls, and the
end-to-end ingestion throughput in pages/s (convert + chunk + embed + write).

    python -m bench.chunkers [--docs 16] [--size 256] [--agentic]   # --agentic uses the configured model
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.chunk_docs import Document, Section, write
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.knowledge.chunking import ChunkSize, make_chunker
from memstrata.knowledge.convert import ConvertedDocument, file_hash
from memstrata.knowledge.limits import IngestLimits
from memstrata.knowledge.media import MediaModels
from memstrata.knowledge.pipeline import convert_source
from memstrata.knowledge.records import chunk_memories, chunks_of
from memstrata.knowledge.sandbox import ConversionSandbox
from memstrata.knowledge.writer import KnowledgeWriter
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.types import Scope

RESULTS = Path(__file__).resolve().parent / "results"
FORMATS = ("docx", "pdf", "pptx", "html", "xlsx")
SCOPE = Scope(user_id="bench")
SECTIONS_PER_TEMPLATE = 2  # twelve sections per document, every fact template twice with other names

# Fact templates: (planted sentence, question), filled with a seeded choice of names, places, numbers.
FACTS = {
    "zh": [
        ("{city}分公司的服务器机房门禁密码是{num}。", "{city}分公司机房的门禁密码是多少？"),
        ("{name}负责{city}仓库的夜班巡逻。", "谁负责{city}仓库的夜班巡逻？"),
        ("{city}办公室的年度预算是{num}万元。", "{city}办公室一年的预算有多少？"),
        ("{name}的工号是{num}。", "{name}的工号是多少？"),
        ("{city}项目的验收日期定在{month}月{day}日。", "{city}项目什么时候验收？"),
        ("{name}对{food}过敏，聚餐时要避开。", "{name}对什么过敏？"),
    ],
    "en": [
        ("The server room in the {city} branch opens with code {num}.", "What code opens the {city} server room?"),
        ("{name} is in charge of night patrols at the {city} depot.", "Who runs night patrols at the {city} depot?"),
        ("The yearly budget of the {city} office is {num} thousand dollars.", "What is the {city} office budget?"),
        ("The staff number of {name} is {num}.", "What is the staff number of {name}?"),
        ("Acceptance of the {city} project is set for {month}/{day}.", "When is the {city} project accepted?"),
        ("{name} is allergic to {food}, so team dinners avoid it.", "What is {name} allergic to?"),
    ],
}
NAMES = {"zh": ["王芳", "刘洋", "陈静", "赵磊", "孙丽", "周强"], "en": ["Alice Grant", "Omar Khan", "Lena Park",
         "Diego Ruiz", "Hana Sato", "Ivan Petrov"]}  # fmt: skip
CITIES = {"zh": ["南京", "西安", "青岛", "厦门", "长沙", "昆明"], "en": ["Leeds", "Porto", "Austin", "Lyon", "Graz",
          "Osaka"]}  # fmt: skip
FOODS = {"zh": ["花生", "虾", "芒果", "牛奶"], "en": ["peanuts", "shrimp", "mango", "milk"]}
FILLER = {
    "zh": ["公司{y}年的营收保持稳定增长。", "团队每周一上午召开例会，讨论本周计划。", "新员工需要完成线上安全培训。",
           "办公室的打印机由行政部统一维护。", "季度总结会通常安排在月底的周五下午。", "客户满意度调查每半年进行一次。",
           "差旅报销需要附上原始发票。", "会议室可以通过内部系统提前预订。", "访客需要在前台登记并佩戴胸牌。",
           "食堂午餐供应时间是中午十二点到两点。"],
    "en": ["Revenue grew steadily again in {y}.", "The team meets every Monday morning to plan the week.",
           "New staff complete an online safety course.", "The office printers are maintained by facilities.",
           "Quarterly reviews usually happen on the last Friday of the month.",
           "Customer satisfaction is surveyed twice a year.", "Travel claims need the original receipts.",
           "Meeting rooms can be booked in advance on the intranet.",
           "Visitors sign in at the front desk and wear a badge.", "The canteen serves lunch from noon to two."],
}  # fmt: skip


@dataclass(frozen=True)
class Question:
    doc: int
    sentence: str
    question: str


def build_set(count: int, seed: int = 7) -> tuple[list[Document], list[Question]]:
    """``count`` documents (alternating zh/en), twelve sections each, one planted fact per section. Names and
    cities repeat across documents and sections, so a question has near-miss chunks to beat."""
    rng = random.Random(seed)
    documents, questions = [], []
    for index in range(count):
        lang = "zh" if index % 2 == 0 else "en"
        sections = []
        for number, (fact, ask) in enumerate(FACTS[lang] * SECTIONS_PER_TEMPLATE):
            values = {
                "name": rng.choice(NAMES[lang]), "city": rng.choice(CITIES[lang]), "num": rng.randint(1000, 9999),
                "month": rng.randint(1, 12), "day": rng.randint(1, 28), "food": rng.choice(FOODS[lang]),
            }  # fmt: skip
            filler = [line.format(y=rng.randint(2015, 2024)) for line in rng.sample(FILLER[lang], 7)]
            planted = fact.format(**values)
            filler.insert(rng.randint(1, 6), planted)
            title = f"第{number + 1}节 {values['city']}" if lang == "zh" else f"Section {number + 1}: {values['city']}"
            sections.append(Section(title, tuple(filler)))
            questions.append(Question(index, planted, ask.format(**values)))
        heading = f"{'运营手册' if lang == 'zh' else 'Operations manual'} {index + 1}"
        documents.append(Document(heading, tuple(sections), lang=lang))
    return documents, questions


def convert_all(documents: list[Document], directory: Path) -> tuple[list[ConvertedDocument], float]:
    converted = []
    started = time.perf_counter()
    with ConversionSandbox(IngestLimits()) as sandbox:
        for index, doc in enumerate(tqdm(documents, desc="convert", unit="doc")):
            fmt = FORMATS[index % len(FORMATS)]
            path = write(doc, directory, f"doc{index:03d}", fmt)
            converted.append(
                convert_source(
                    path,
                    fmt,
                    source=path.as_posix(),
                    digest=file_hash(path),
                    limits=IngestLimits(),
                    sandbox=sandbox,
                    media=MediaModels(),
                )
            )
    return converted, time.perf_counter() - started


def run_chunker(
    name: str, docs: list[ConvertedDocument], questions: list[Question], size: ChunkSize, embedder: Any, model: Any
) -> dict[str, Any]:
    chunker = make_chunker(name, size, embedder=embedder, model=model)
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "bench.db")
        memory = Memory(store, embedder, settings=load_settings({"store": {"path": store.location}}))
        writer = KnowledgeWriter(store, embedder)
        chunk_s = embed_s = 0.0
        chunks = tokens = calls = 0
        evidence: dict[int, list[str]] = {}
        for index, doc in enumerate(tqdm(docs, desc=name, unit="doc")):
            started = time.perf_counter()
            split = chunker.split(doc.markdown)
            pieces = chunks_of(doc, split)
            chunk_s += time.perf_counter() - started
            calls += split.model_calls
            chunks += len(pieces)
            tokens += sum(piece.tokens for piece in pieces)
            evidence[index] = [piece.text for piece in pieces]
            items = chunk_memories(doc, pieces, scope=SCOPE, collection="bench", chunker=name, now=memory._clock())
            started = time.perf_counter()
            writer.write_document(items, reason="bench")
            embed_s += time.perf_counter() - started
        found = 0
        for question in questions:
            hits = memory.search(question.question, user_id=SCOPE.user_id, filters={"kind": "knowledge"}, limit=5,
                                 record_access=False)  # fmt: skip
            found += any(question.sentence in hit.text for hit in hits)
        memory.close()
    pages = sum(doc.pages for doc in docs)
    return {
        "chunker": name,
        "recall_at_5": round(found / len(questions), 3),
        "chunks_per_doc": round(chunks / len(docs), 1),
        "tokens_per_doc": round(tokens / len(docs), 1),
        "chunk_s_per_page": round(chunk_s / pages, 4),
        "embed_write_s": round(embed_s, 2),
        "model_calls": calls,
        "pages": pages,
        "_chunk_s": chunk_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=16)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--overlap", type=int, default=32)
    parser.add_argument("--agentic", action="store_true", help="also run the agentic chunker (configured model)")
    args = parser.parse_args()
    documents, questions = build_set(args.docs)
    embedder = UniversalSentenceEncoder(threads=1)
    embedder.embed_batch(["warm up"])  # load the weights before anything is timed
    model = None
    names = ["fixed", "recursive", "structure", "semantic"]
    if args.agentic:
        import os

        from memstrata.providers.llm_factory import resolve_llm

        model = resolve_llm(load_settings().llm, os.environ).model
        names.append("agentic")
    with tempfile.TemporaryDirectory() as folder:
        docs, convert_s = convert_all(documents, Path(folder))
    pages = sum(doc.pages for doc in docs)
    size = ChunkSize(size=args.size, overlap=args.overlap)
    rows = [run_chunker(name, docs, questions, size, embedder, model) for name in names]
    for row in rows:
        total = convert_s + row.pop("_chunk_s") + row["embed_write_s"]
        row["ingest_pages_per_s"] = round(pages / total, 2)
    result = {
        "suite": "chunkers",
        "documents": len(docs),
        "questions": len(questions),
        "pages": pages,
        "formats": list(FORMATS),
        "chunk_size": args.size,
        "overlap": args.overlap,
        "convert_s_per_page": round(convert_s / pages, 4),
        "rows": rows,
    }
    stamp = time.strftime("%Y-%m-%d")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stamp}-chunkers.json").write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
    (RESULTS / f"{stamp}-chunkers.md").write_text(markdown(result))
    print(markdown(result))


def markdown(result: dict[str, Any]) -> str:
    head = (
        f"# Chunker comparison ({result['documents']} generated zh/en documents, {result['pages']} pages, "
        f"{result['questions']} questions; chunk {result['chunk_size']} tokens, overlap {result['overlap']})\n\n"
        f"Formats rotated over {', '.join(result['formats'])}; conversion {result['convert_s_per_page']} s/page "
        "(sandboxed MarkItDown). Recall@5: a top-5 chunk contains the whole planted sentence.\n\n"
        "| chunker | recall@5 | chunks/doc | tokens/doc | chunk s/page | embed+write s | model calls | pages/s |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    lines = [
        f"| {r['chunker']} | {r['recall_at_5']} | {r['chunks_per_doc']} | {r['tokens_per_doc']} | "
        f"{r['chunk_s_per_page']} | {r['embed_write_s']} | {r['model_calls']} | {r['ingest_pages_per_s']} |"
        for r in result["rows"]
    ]
    return head + "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
