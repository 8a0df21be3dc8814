"""The Markdown vault: sync of a generated 10,000-note vault (cold, no change, one edited note, a rebuild
from the files), search latency over it, and the tokens progressive loading saves against whole files
at equal evidence recall on a generated domain.

``python -m bench.vault_bench [--notes 10000] [--quick]`` writes bench/results/<date>-vault.{json,md}.
The embedder is the bundled USE model with no cache on the cold sync (the store's embedding cache is
empty), so the cold number is honest: embedding is most of it. Notes are bilingual (about 40% Chinese),
three H2 sections of three to five sentences each under an H1, with frontmatter.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.metrics import percentiles
from bench.report import RESULTS_DIR, stamp
from memstrata import Memory
from memstrata.config import load_settings
from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.sentences import estimate_tokens
from memstrata.storage.sqlite.store import SQLiteStore
from memstrata.vault import Vault, VaultSettings

TOPICS_EN = [
    "retrieval",
    "memory",
    "planning",
    "evaluation",
    "compression",
    "alignment",
    "tool use",
    "reasoning",
    "indexing",
    "caching",
    "ranking",
    "forgetting",
    "consolidation",
    "summarisation",
    "grounding",
]
TOPICS_ZH = [
    "检索",
    "记忆",
    "规划",
    "评测",
    "压缩",
    "对齐",
    "工具调用",
    "推理",
    "索引",
    "缓存",
    "排序",
    "遗忘",
    "巩固",
    "摘要",
    "事实核查",
]
VERBS_EN = ["improves", "reduces", "stabilises", "explains", "measures", "breaks", "limits", "extends"]
VERBS_ZH = ["提升了", "降低了", "稳定了", "解释了", "衡量了", "打破了", "限制了", "扩展了"]
OBJECTS_EN = [
    "recall on long dialogues",
    "latency under load",
    "the cost per query",
    "multi-hop accuracy",
    "robustness to paraphrase",
    "memory growth over months",
    "cross-lingual transfer",
]
OBJECTS_ZH = [
    "长对话召回率",
    "高负载下的延迟",
    "单次查询成本",
    "多跳问答准确率",
    "对改写的鲁棒性",
    "数月的记忆增长",
    "跨语言迁移",
]
ATTRIBUTES = [("training budget", "训练预算"), ("context window", "上下文窗口"), ("release year", "发布年份"),
              ("licence", "许可证"), ("main author", "第一作者"), ("dataset size", "数据集规模")]  # fmt: skip
SECTIONS = [("Idea", "思路"), ("Results", "结果"), ("Limits", "局限")]


def _sentence(rng: random.Random, chinese: bool) -> str:
    if chinese:
        topic, verb, target = rng.choice(TOPICS_ZH), rng.choice(VERBS_ZH), rng.choice(OBJECTS_ZH)
        return f"{topic}方法{verb}{target}，在{rng.randint(2, 64)}个任务上验证。"
    topic, verb, target = rng.choice(TOPICS_EN), rng.choice(VERBS_EN), rng.choice(OBJECTS_EN)
    return f"The {topic} method {verb} {target} across {rng.randint(2, 64)} tasks."


def _fact(entity: str, attribute: tuple[str, str], value: str, chinese: bool) -> tuple[str, str]:
    """(evidence sentence, question) about one attribute of an entity."""
    if chinese:
        return f"{entity}的{attribute[1]}是{value}。", f"{entity}的{attribute[1]}是什么？"
    return f"The {attribute[0]} of {entity} is {value}.", f"What is the {attribute[0]} of {entity}?"


def note_text(rng: random.Random, number: int, chinese: bool) -> tuple[str, list[tuple[str, str]]]:
    """A generated atomic note and its (evidence, question) facts: one per section, at a random position."""
    entity = f"Model-{number:05d}"
    tag = rng.choice(["method", "method", "benchmark", "blog", "survey"])
    category = rng.choice(["Storage", "Update", "Retrieval"])
    concept = rng.choice(TOPICS_EN)
    created = f"2025-{number % 12 + 1:02d}-01"
    lines = ["---", f"tag: {tag}", f"category: {category}", f"concept: {concept}", f"created: {created}", "---"]
    lines += [f"# {entity}", ""]
    facts: list[tuple[str, str]] = []
    attributes = rng.sample(ATTRIBUTES, len(SECTIONS))
    for (en, zh), attribute in zip(SECTIONS, attributes, strict=True):
        body = [_sentence(rng, chinese) for _ in range(rng.randint(3, 5))]
        evidence, question = _fact(entity, attribute, f"{rng.randint(1, 999)}{rng.choice('KMGB')}", chinese)
        body.insert(rng.randint(0, len(body)), evidence)
        facts.append((evidence, question))
        lines += [f"## {zh if chinese else en}", "", ("" if chinese else " ").join(body), ""]
    return "\n".join(lines), facts


def generate(root: Path, notes: int, domains: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """Write ``notes`` atomic notes over ``domains`` domains (plus each domain's layer files); returns
    (path, evidence, question) for every fact."""
    rng = random.Random(seed)
    facts: list[tuple[str, str, str]] = []
    for d in range(domains):
        folder = root / f"domain-{d:02d}"
        (folder / "notes").mkdir(parents=True, exist_ok=True)
        for name, heading in (("basic_info.md", "Basic info 基本信息"), ("taxonomy.md", "Taxonomy 分类"),
                              ("main_challenge.md", "Main challenges 核心挑战"), ("network.md", "Network 概念网络"),
                              ("human_preference.md", "Preferences 偏好")):  # fmt: skip
            sections = "\n\n".join(f"## {t} {i}\n\n" + " ".join(_sentence(rng, i % 2 == 0) for _ in range(4))
                                   for i, t in enumerate(TOPICS_EN[:4]))  # fmt: skip
            (folder / name).write_text(f"# {heading}\n\n{sections}\n", encoding="utf-8")
    for number in range(notes):
        chinese = rng.random() < 0.4
        text, note_facts = note_text(rng, number, chinese)
        path = f"domain-{number % domains:02d}/notes/note-{number:05d}.md"
        (root / path).write_text(text, encoding="utf-8")
        facts += [(path, evidence, question) for evidence, question in note_facts]
    return facts


class TimedEmbedder:
    """The bundled model, with the seconds and texts it spent counted."""

    def __init__(self, inner: UniversalSentenceEncoder) -> None:
        self.inner, self.model_id, self.dims = inner, inner.model_id, inner.dims
        self.seconds = 0.0
        self.texts = 0

    def embed_batch(self, texts: Sequence[str]) -> Any:
        started = time.perf_counter()
        out = self.inner.embed_batch(texts)
        self.seconds += time.perf_counter() - started
        self.texts += len(texts)
        return out


def _vault(root: Path, db: Path, embedder: Any) -> Vault:
    memory = Memory(SQLiteStore(db), embedder, settings=load_settings({"store": {"path": str(db)}}))
    return Vault(memory, VaultSettings(path=str(root), batch_notes=128))


def run_sync(notes: int, embedder: TimedEmbedder, queries: int = 200) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        facts = generate(root, notes, domains=20)
        vault = _vault(root, Path(tmp) / "vault.db", embedder)
        bar = tqdm(total=notes + 100, desc=f"cold sync of {notes} notes", unit="note")
        report = vault.sync(progress=lambda done, total: bar.update(done - bar.n))
        bar.close()
        cold = {"seconds": report.seconds, "sections": report.sections_added, "embedded": report.embedded,
                "embed_seconds": round(embedder.seconds, 1), "notes_per_s": round((report.new) / report.seconds, 1),
                "sections_embedded_per_s": round(embedder.texts / embedder.seconds, 1)}  # fmt: skip
        idle = vault.sync()
        target = root / facts[0][0]
        target.write_text(target.read_text(encoding="utf-8") + "\nOne more line, edited by hand.\n", encoding="utf-8")
        one = vault.sync()
        target.write_text(target.read_text(encoding="utf-8") + "\n再加一行。\n", encoding="utf-8")
        watched = vault.sync_paths([facts[0][0]])
        embedder.seconds = 0.0
        rebuilt = vault.rebuild(confirm=True)
        rng = random.Random(3)
        asked = rng.sample(facts, min(queries, len(facts)))
        latencies, found = [], 0
        for path, _, question in tqdm(asked, desc="vault search", unit="query"):
            started = time.perf_counter()
            hits = vault.search(question, limit=10)
            latencies.append((time.perf_counter() - started) * 1000)
            found += any(hit.path == path for hit in hits)
        domain_latencies = []
        for path, _, question in asked[:50]:
            started = time.perf_counter()
            vault.search(question, domain=path.split("/")[0], limit=10)
            domain_latencies.append((time.perf_counter() - started) * 1000)
        return {
            "notes": notes,
            "domains": 20,
            "cold": cold,
            "no_change": {"seconds": idle.seconds, "unchanged": idle.unchanged},
            "one_edited": {"seconds": one.seconds, "edited": one.edited, "embedded": one.embedded},
            "one_edited_watcher_path": {"seconds": watched.seconds, "edited": watched.edited},
            "rebuild_warm_cache": {
                "seconds": rebuilt.seconds,
                "embedded": rebuilt.embedded,
                "model_seconds": round(embedder.seconds, 2),
            },
            "search": {
                "queries": len(asked),
                **{k: round(v, 2) for k, v in percentiles(latencies).items()},
                "note_at_10": round(found / len(asked), 3),
            },
            "search_in_domain": {k: round(v, 2) for k, v in percentiles(domain_latencies).items()},
        }


def run_tokens(embedder: Any, notes: int = 200) -> dict[str, Any]:
    """Evidence recall and tokens: whole files of the top-k notes vs the top-k sections, and the domain
    context at several budgets vs every file of the domain whole."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        facts = generate(root, notes, domains=1, seed=11)
        vault = _vault(root, Path(tmp) / "tokens.db", embedder)
        vault.sync()
        whole = {n.path: (root / n.path).read_text(encoding="utf-8") for n in vault.notes()}
        ranked = [
            (evidence, vault.search(question, limit=20)) for _, evidence, question in tqdm(facts, desc="questions")
        ]
        rows: dict[str, dict[str, float]] = {}
        for k in (1, 2, 3, 5):
            recall = {"whole files": 0, "sections": 0}
            tokens = {"whole files": 0, "sections": 0}
            for evidence, hits in ranked:
                paths = list(dict.fromkeys(hit.path for hit in hits))[:k]
                text = "\n\n".join(whole[p] for p in paths)
                recall["whole files"] += evidence in text
                tokens["whole files"] += estimate_tokens(text)
                sections = "\n\n".join(hit.text for hit in hits[:k])
                recall["sections"] += evidence in sections
                tokens["sections"] += estimate_tokens(sections)
            for name in recall:
                rows[f"{name} top-{k}"] = {
                    "recall": round(recall[name] / len(facts), 3),
                    "mean_tokens": round(tokens[name] / len(facts), 1),
                }
        domain_all = "\n\n".join(whole.values())
        contexts = {}
        sample = facts[:: max(1, len(facts) // 100)]
        for budget in (300, 600, 1200, 2400):
            hit_count = used = 0
            for _, evidence, question in sample:
                built = vault.context("domain-00", budget_tokens=budget, query=question)
                hit_count += evidence in built.text
                used += built.tokens
            contexts[str(budget)] = {
                "recall": round(hit_count / len(sample), 3),
                "mean_tokens": round(used / len(sample)),
            }
        return {
            "notes": notes,
            "facts": len(facts),
            "whole_vs_sections": rows,
            "whole_domain": {"recall": 1.0, "tokens": estimate_tokens(domain_all)},
            "domain_context": contexts,
            "context_questions": len(sample),
        }


def equal_recall(rows: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
    """For each whole-file row, the cheapest section row with at least its recall: the tokens saved."""
    out = []
    for name, whole in rows.items():
        if not name.startswith("whole files"):
            continue
        matches = [
            (r["mean_tokens"], n)
            for n, r in rows.items()
            if n.startswith("sections") and r["recall"] >= whole["recall"]
        ]
        if matches:
            tokens, section = min(matches)
            out.append({"whole": name, "recall": whole["recall"], "whole_tokens": whole["mean_tokens"],
                        "sections": section, "section_tokens": tokens,
                        "saved": round(1 - tokens / whole["mean_tokens"], 3)})  # fmt: skip
    return out


def _sync_table(s: dict[str, Any]) -> list[str]:
    cold, one, watched, rebuilt = s["cold"], s["one_edited"], s["one_edited_watcher_path"], s["rebuild_warm_cache"]
    search, domain = s["search"], s["search_in_domain"]
    return [
        f"## Sync of {s['notes']:,} generated notes ({s['domains']} domains, bilingual, 4 sections each)",
        "",
        "| step | seconds | notes | sections embedded |",
        "|---|---|---|---|",
        f"| cold (empty index) | {cold['seconds']:.1f} | {s['notes']:,} new | {cold['embedded']:,} |",
        f"| no change | {s['no_change']['seconds']:.2f} | {s['no_change']['unchanged']:,} unchanged | 0 |",
        f"| one edited note (full scan) | {one['seconds']:.2f} | 1 edited | {one['embedded']} |",
        f"| one edited note (watcher path) | {watched['seconds']:.3f} | 1 edited | 1 |",
        f"| rebuild from the files (warm embedding cache) | {rebuilt['seconds']:.1f} | {s['notes']:,} new | "
        f"{rebuilt['embedded']} |",
        "",
        f"Cold sync: {cold['embed_seconds']:.0f} s of {cold['seconds']:.0f} s were the embedder "
        f"({cold['sections_embedded_per_s']:.0f} sections/s); {cold['notes_per_s']:.1f} notes/s overall.",
        "",
        "## Search over the vault",
        "",
        "| query set | p50 ms | p95 ms | p99 ms | note found @10 |",
        "|---|---|---|---|---|",
        f"| whole vault, {search['queries']} questions | {search['p50_ms']:.1f} | {search['p95_ms']:.1f} | "
        f"{search['p99_ms']:.1f} | {search['note_at_10']:.3f} |",
        f"| one domain (metadata filter in the store) | {domain['p50_ms']:.1f} | {domain['p95_ms']:.1f} | "
        f"{domain['p99_ms']:.1f} | |",
        "",
    ]


def _tokens_table(t: dict[str, Any], equal: list[dict[str, Any]]) -> list[str]:
    lines = [
        f"## Progressive loading vs whole files ({t['notes']} notes, {t['facts']} evidence questions)",
        "",
        "| context | evidence recall | mean tokens |",
        "|---|---|---|",
    ]
    lines += [
        f"| {name} | {row['recall']:.3f} | {row['mean_tokens']:.0f} |" for name, row in t["whole_vs_sections"].items()
    ]
    whole = t["whole_domain"]
    lines.append(f"| every file of the domain, whole | {whole['recall']:.3f} | {whole['tokens']:,} |")
    for budget, row in t["domain_context"].items():
        lines.append(f"| domain_context(budget={budget}, query) | {row['recall']:.3f} | {row['mean_tokens']} |")
    lines += ["", "At equal evidence recall:", "", "| whole files | recall | tokens | sections | tokens | saved |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for r in equal:
        lines.append(
            f"| {r['whole']} | {r['recall']:.3f} | {r['whole_tokens']:.0f} | {r['sections']} | "
            f"{r['section_tokens']:.0f} | {r['saved']:.0%} |"
        )
    return lines


def markdown(result: dict[str, Any]) -> str:
    head = [
        f"# Vault benchmark ({result['date']})",
        "",
        f"Machine: {result['machine']}. Embedder: bundled USE (threads=1), no warm cache on the cold sync.",
        "",
    ]
    body = _sync_table(result["sync"]) if "sync" in result else []
    return "\n".join(head + body + _tokens_table(result["tokens"], result["equal_recall"])) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="300 notes, to check the harness")
    parser.add_argument("--machine", default="2 shared cores (dev box)")
    args = parser.parse_args()
    notes = 300 if args.quick else args.notes
    model = UniversalSentenceEncoder(threads=1)
    model.embed_batch(["warm up"])
    started = time.perf_counter()
    tokens = run_tokens(TimedEmbedder(model))
    result = {
        "date": stamp(),
        "machine": args.machine,
        "tokens": tokens,
        "equal_recall": equal_recall(tokens["whole_vs_sections"]),
    }
    result["sync"] = run_sync(notes, TimedEmbedder(model))
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    suite = "vault-quick" if args.quick else "vault"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{stamp()}-{suite}.json").write_text(json.dumps(result, ensure_ascii=False, indent=1))
    (RESULTS_DIR / f"{stamp()}-{suite}.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
