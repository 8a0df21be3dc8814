"""The vault benchmark's harness on a tiny generated vault: the numbers it reports are computed, not
assumed (recall counted from real search results, tokens from the real context)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("tqdm", reason="the benchmarks need the bench extra: pip install -e '.[bench]'")

from bench.vault_bench import TimedEmbedder, equal_recall, generate, markdown, run_sync, run_tokens

from memstrata.providers.use_embedder import UniversalSentenceEncoder
from memstrata.vault.markdown import parse_note


def test_generated_notes_plant_one_fact_per_section(tmp_path: Path) -> None:
    facts = generate(tmp_path, notes=6, domains=2)
    assert len(facts) == 18
    path, evidence, question = facts[0]
    text = (tmp_path / path).read_text(encoding="utf-8")
    note = parse_note(text, path)
    assert evidence in text and [s.level for s in note.sections] == [1, 2, 2, 2]
    assert question.endswith(("?", "？")) and note.frontmatter["tag"] in {"method", "benchmark", "blog", "survey"}
    assert (tmp_path / "domain-01/taxonomy.md").is_file()


def test_the_harness_measures_a_small_vault(embedder: UniversalSentenceEncoder) -> None:
    tokens = run_tokens(TimedEmbedder(embedder), notes=12)
    rows = tokens["whole_vs_sections"]
    assert rows["whole files top-5"]["recall"] >= rows["whole files top-1"]["recall"] > 0
    assert rows["sections top-1"]["mean_tokens"] < rows["whole files top-1"]["mean_tokens"]
    synced = run_sync(24, TimedEmbedder(embedder), queries=10)
    assert synced["cold"]["embedded"] > 0 and synced["one_edited"]["edited"] == 1
    assert synced["rebuild_warm_cache"]["embedded"] == 0 and synced["search"]["queries"] == 10
    result = {"date": "today", "machine": "test", "tokens": tokens, "equal_recall": equal_recall(rows),
              "sync": synced}  # fmt: skip
    assert "| cold (empty index) |" in markdown(result)
