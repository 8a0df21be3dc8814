"""Files are the truth, the index is derived: sync of new / edited / moved / deleted notes, history,
a rebuild that gives identical results, and search by the taxonomy. Real store (SQLite and
PostgreSQL), real embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.errors import ConfirmationRequiredError, InvalidInputError, NotFoundError
from memstrata.types import HistoryAction
from memstrata.vault import Vault
from memstrata.vault.usage import lifted as lifted_score
from vault.vault_helpers import EXAMPLE_NOTES, edit, make_vault

MEM0 = "agent-memory/notes/mem0.md"
QUERIES = ["怎么评测长对话的记忆召回", "forgetting old decisions", "文件即记忆", "write latency of add()", "混合检索"]


def ranked(vault: Vault, query: str) -> list[tuple[str, str, str, float]]:
    return [(h.path, h.heading, h.text, h.score) for h in vault.search(query, limit=8)]


def test_the_example_is_indexed_and_searchable_in_both_languages(vault: Vault) -> None:
    assert "agent-memory/notes/locomo.md" in {h.path for h in vault.search("怎么评测长对话的记忆召回", limit=2)}
    assert vault.search("单跳、多跳与时间问答的评测", limit=1)[0].path == "agent-memory/notes/locomo.md"
    top = vault.search("why does one add() take seconds?", limit=1)[0]
    assert (top.path, top.heading) == (MEM0, "mem0 > Weakness 不足")
    assert top.span is not None and top.text.startswith("mem0 > Weakness 不足\n")
    [domain] = vault.domains()
    assert domain.name == "agent-memory" and domain.notes == EXAMPLE_NOTES
    assert domain.layers == {"alignment": 1, "atomic": 4, "basic": 2, "cognition": 2}
    assert vault.sync().unchanged == EXAMPLE_NOTES  # a second sync has nothing to do
    with pytest.raises(NotFoundError, match=r"no domain 'agent-memroy'.*domains: agent-memory"):
        vault.search("memory", domain="agent-memroy")  # a typo looked like a vault without an answer


def test_search_and_catalog_by_category_concept_and_tag(vault: Vault) -> None:
    assert [n.path for n in vault.notes(concept="Reconciliation")] == [MEM0]  # case does not matter
    assert [n.path for n in vault.notes(category="Storage")] == [
        "agent-memory/notes/letta-memfs.md",
        "agent-memory/notes/memory-survey.md",
    ]
    assert {n.path for n in vault.notes(tag="benchmark")} == {"agent-memory/notes/locomo.md"}
    hits = vault.search("memory", category="Storage", limit=5)
    assert hits and {h.path for h in hits} <= {
        "agent-memory/notes/letta-memfs.md",
        "agent-memory/notes/memory-survey.md",
    }
    assert all(h.layer == "atomic" for h in vault.search("memory", layer="atomic"))
    assert vault.search("memory", concept="no such concept") == []


def test_edit_move_and_delete_follow_the_files(vault: Vault, vault_root: Path) -> None:
    before = {h.memory_id for h in vault.search("Weakness mem0 add seconds", limit=20) if h.path == MEM0}
    edit(vault_root / MEM0, "One add() takes seconds", "One add() takes twelve seconds on a laptop")
    report = vault.sync()
    # both sections carry the note checksum, so both are rewritten; only the edited one is re-embedded
    assert (report.edited, report.sections_updated, report.embedded) == (1, 2, 1)
    hit = vault.search("twelve seconds on a laptop", limit=1)[0]
    assert hit.path == MEM0 and hit.memory_id in before  # the same section memory, updated in place
    update = [e for e in vault.history(MEM0) if e.action == HistoryAction.UPDATE]
    assert update and "One add() takes seconds" in str(update[-1].old_text)

    (vault_root / "agent-memory/archive").mkdir()
    (vault_root / MEM0).rename(vault_root / "agent-memory/archive/mem0.md")
    moved = vault.sync()
    assert (moved.moved, moved.new, moved.deleted, moved.embedded) == (1, 0, 0, 0)
    hit = vault.search("twelve seconds on a laptop", limit=1)[0]
    assert hit.path == "agent-memory/archive/mem0.md" and hit.memory_id in before
    assert any(e.details.get("moved_from") == MEM0 for e in vault.history("agent-memory/archive/mem0.md"))

    (vault_root / "agent-memory/archive/mem0.md").unlink()
    assert vault.sync().deleted == 1
    assert all(h.path != "agent-memory/archive/mem0.md" for h in vault.search("twelve seconds on a laptop"))
    deletions = [e for e in vault.history("agent-memory/archive/mem0.md") if e.action == HistoryAction.DELETE]
    assert deletions and all(e.old_text for e in deletions)  # history keeps the text


def test_a_new_heading_adds_a_section_and_a_removed_one_deletes_it(vault: Vault, vault_root: Path) -> None:
    edit(vault_root / MEM0, "## Weakness 不足", "## Cost 成本\n\n每次写入两次模型调用。\n\n## Weakness 不足")
    assert vault.sync().sections_added == 1
    assert vault.search("每次写入两次模型调用", limit=1)[0].heading == "mem0 > Cost 成本"
    edit(vault_root / MEM0, "## Cost 成本\n\n每次写入两次模型调用。\n\n", "")
    assert vault.sync().sections_deleted == 1


def test_rebuilding_the_index_from_the_files_gives_identical_results(vault: Vault) -> None:
    before = {query: ranked(vault, query) for query in QUERIES}
    assert all(before.values())
    report = vault.rebuild(confirm=True)
    assert report.new == EXAMPLE_NOTES and report.embedded == 0  # every vector came from the cache
    assert {query: ranked(vault, query) for query in QUERIES} == before


def test_dropping_the_index_needs_confirmation(vault: Vault) -> None:
    with pytest.raises(ConfirmationRequiredError):
        vault.drop_index()
    assert vault.search("mem0")


def test_a_vanished_vault_is_not_wiped_from_the_index_without_confirmation(vault: Vault, vault_root: Path) -> None:
    shutil.rmtree(vault_root / "agent-memory")
    with pytest.raises(ConfirmationRequiredError, match="confirm-deletions"):
        vault.sync()
    assert vault.search("LoCoMo", limit=1)  # nothing was removed
    assert vault.sync(confirm_deletions=True).deleted == EXAMPLE_NOTES
    assert vault.search("LoCoMo") == []


def test_broken_files_are_indexed_and_reported(vault: Vault, vault_root: Path) -> None:
    (vault_root / "agent-memory/notes/bad-yaml.md").write_text("---\ntag: [oops\n---\n# 坏的\n内容还在。\n")
    (vault_root / "agent-memory/notes/latin1.md").write_bytes("# Café\nna\xefve r\xe9sum\xe9 notes\n".encode("latin-1"))
    report = vault.sync()
    assert report.new == 2 and len(report.warnings) == 2
    assert any("not valid YAML" in w for w in report.warnings) and any("UTF-8" in w for w in report.warnings)
    assert vault.search("内容还在", limit=1)[0].path == "agent-memory/notes/bad-yaml.md"


def test_a_binary_file_named_md_is_reported_not_indexed(vault: Vault, vault_root: Path) -> None:
    """A PNG saved as .md was indexed as a section of replacement characters that searches then returned."""
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
    (vault_root / "agent-memory/notes/diagram.md").write_bytes(png)
    (vault_root / "agent-memory/notes/noise.md").write_bytes(bytes(range(128, 256)) * 20)  # no NUL, not UTF-8
    report = vault.sync()
    assert report.sections_added == 0 and sorted(w.split()[0] for w in report.warnings) == [
        "agent-memory/notes/diagram.md", "agent-memory/notes/noise.md"]  # fmt: skip
    assert all("binary" in w for w in report.warnings)
    assert not [hit for hit in vault.search("PNG IHDR", limit=10) if hit.path.endswith(("diagram.md", "noise.md"))]


def test_reading_counts_as_use_and_lifts_ranking(vault: Vault) -> None:
    plain = {h.path: h.score for h in vault.search("memory as files a person can edit", limit=10)}
    for _ in range(5):
        vault.show("agent-memory/notes/letta-memfs.md", depth=1)
    lifted = {h.path: (h.score, h.uses) for h in vault.search("memory as files a person can edit", limit=10)}
    score, uses = lifted["agent-memory/notes/letta-memfs.md"]
    before = plain["agent-memory/notes/letta-memfs.md"]
    assert uses == 5 and before < score <= before + (1 - before) * vault.settings.usage_weight <= 1.0
    assert lifted_score(0.99, 10**6, 1.0) <= 1.0  # used without end, a score stays in [0, 1] (a multiplier gave 1.02)
    assert vault.notes(tag="blog")[0].uses == 5
    found = {h.path: h.uses for h in vault.search("LoCoMo")}
    assert found == {h.path: h.uses for h in vault.search("LoCoMo")}  # being found is not being used
    assert found["agent-memory/notes/locomo.md"] == 0


def test_forgetting_report_and_confirmed_forget(vault: Vault, vault_root: Path) -> None:
    vault.show("agent-memory/notes/mem0.md")
    report = vault.forgetting(min_idle_days=0, limit=10)
    assert {c.path for c in report} == {f"agent-memory/notes/{n}.md" for n in ("mem0", "locomo", "memory-survey",
                                                                               "letta-memfs")}  # fmt: skip
    assert report[-1].path == MEM0  # used once: the last to forget
    target = report[0]
    with pytest.raises(ConfirmationRequiredError):
        vault.forget(target.path, version=target.version)
    assert (vault_root / target.path).exists()
    ref = vault.forget(target.path, version=target.version, confirm=True)
    assert ref.path == f".trash/{target.path}" and (vault_root / ref.path).exists()
    assert target.path not in {n.path for n in vault.notes()}


def test_the_vault_belongs_to_its_scope(memory: Memory, vault: Vault) -> None:
    assert vault.at(agent_id="vault") is vault
    with pytest.raises(NotFoundError, match="belongs to agent_id=vault"):
        vault.at(user_id="mallory")
    with pytest.raises(NotFoundError, match="no vault for this tenant"):
        Vault.of(memory.for_tenant("other-company"))
    assert memory.search("LoCoMo", user_id="mallory") == []  # notes never leak into another scope's search


def test_a_second_vault_in_the_same_store_stays_apart(memory: Memory, vault: Vault, tmp_path: Path) -> None:
    other = make_vault(memory, tmp_path / "second", name="second")
    other.init(example=False)
    (tmp_path / "second/cooking").mkdir()
    (tmp_path / "second/cooking/tofu.md").write_text("# 麻婆豆腐\n花椒和豆瓣酱。\n", encoding="utf-8")
    assert other.sync().new == 1
    assert {h.path for h in other.search("LoCoMo")} <= {"cooking/tofu.md"}  # only its own notes
    assert other.search("麻婆豆腐", limit=1)[0].path == "cooking/tofu.md"
    assert all(h.path != "cooking/tofu.md" for h in vault.search("麻婆豆腐"))
    assert vault.sync().unchanged == EXAMPLE_NOTES


def test_a_note_that_links_outside_the_vault_is_not_indexed(vault: Vault, vault_root: Path, tmp_path: Path) -> None:
    """A user trial: a link in the vault to a file outside it was indexed by sync and served by search (REST and the
    console), while reading it was refused as "points outside the vault"."""
    secret = tmp_path / "outside" / "s.md"
    secret.parent.mkdir()
    secret.write_text("# SECRET outside vault\n\nThe launch code is 0000.\n", encoding="utf-8")
    (vault_root / "agent-memory" / "link.md").symlink_to(secret)
    vault.sync()
    assert all(hit.path != "agent-memory/link.md" for hit in vault.search("SECRET outside vault launch code"))
    assert MEM0 in {hit.path for hit in vault.search("Weakness mem0 add seconds", limit=20)}


def test_a_bogus_layer_or_budget_is_refused(vault: Vault) -> None:
    """A user trial: search(layer="bogus") answered [] and show(budget_tokens=-5) an empty note."""
    with pytest.raises(InvalidInputError, match="not a vault layer"):
        vault.search("mem0", layer="bogus")
    with pytest.raises(InvalidInputError, match="budget_tokens"):
        vault.show(MEM0, budget_tokens=-5)
    assert vault.search("mem0", layer="atomic") is not None
