"""Agents write safely: every change names the version it read; a person's edit in between makes the
write fail loudly (nothing written, nothing merged); rules files and paths outside the vault are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.types import HistoryAction
from memstrata.vault import ReadOnlyRulesError, StaleVersionError, Vault
from vault.vault_helpers import edit

MEM0 = "agent-memory/notes/mem0.md"


def test_create_then_append_then_patch(vault: Vault, vault_root: Path) -> None:
    ref = vault.create(
        "agent-memory/notes/graphiti.md",
        "# Graphiti\n\n## Idea 思路\n\n时间知识图谱，事实失效而不删除。",
        frontmatter={"tag": "method", "category": "Storage", "concept": ["knowledge graph"]},
        actor="agent:test",
    )
    text = (vault_root / ref.path).read_text(encoding="utf-8")
    assert text.startswith("---\ntag: method\ncategory: Storage\nconcept:\n- knowledge graph\ncreated: ")
    assert vault.search("事实失效而不删除", limit=1)[0].path == ref.path
    assert ref.path in {n.path for n in vault.notes(concept="knowledge graph")}

    appended = vault.append(ref.path, "Edges carry valid_from and valid_to.", version=ref.version, heading="Idea 思路")
    assert appended.version != ref.version
    assert "事实失效而不删除。\n\nEdges carry valid_from" in (vault_root / ref.path).read_text(encoding="utf-8")

    vault.patch(ref.path, "Graphiti > Idea 思路", "Bi-temporal edges. 双时间边。", version=appended.version)
    body = (vault_root / ref.path).read_text(encoding="utf-8")
    assert "## Idea 思路\n\nBi-temporal edges. 双时间边。\n" in body and "valid_from" not in body
    assert vault.search("双时间边", limit=1)[0].heading == "Graphiti > Idea 思路"
    actions = [
        (e.action, e.actor) for e in vault.history(ref.path) if e.details.get("section") == "Graphiti > Idea 思路"
    ]
    assert actions[0] == (HistoryAction.ADD, "agent:test") and actions.count((HistoryAction.UPDATE, "api")) == 2


def test_an_item_appended_to_a_list_keeps_the_list_tight(vault: Vault, vault_root: Path) -> None:
    """Each appended item came after a blank line: a tight list turned loose, one paragraph per item."""
    ref = vault.create("agent-memory/notes/runs.md", "# Runs\n\n## 实验记录\n\n- M=16: 召回 0.95")
    ref = vault.append(ref.path, "- M=32: 召回 0.97", version=ref.version, heading="实验记录")
    ref = vault.append(ref.path, "Next: try M=48.", version=ref.version, heading="实验记录")
    vault.append(ref.path, "- M=48: 召回 0.98", version=ref.version)
    text = (vault_root / ref.path).read_text(encoding="utf-8")
    assert "- M=16: 召回 0.95\n- M=32: 召回 0.97\n\nNext: try M=48.\n\n- M=48: 召回 0.98\n" in text


def test_a_write_based_on_a_stale_version_is_refused(vault: Vault, vault_root: Path) -> None:
    read = vault.show(MEM0, depth=2, sentences=1)
    edit(vault_root / MEM0, "decides ADD, UPDATE, DELETE or NONE", "decides ADD, UPDATE, DELETE or NOOP")  # a person
    before = (vault_root / MEM0).read_bytes()
    with pytest.raises(StaleVersionError, match="changed since version") as refused:
        vault.patch(MEM0, "Idea 思路", "agent text", version=read.version)
    assert isinstance(refused.value, ConflictError) and "Read the note again" in str(refused.value)
    with pytest.raises(StaleVersionError):
        vault.append(MEM0, "more", version=read.version)
    with pytest.raises(StaleVersionError):
        vault.move(MEM0, "agent-memory/mem0.md", version=read.version)
    assert (vault_root / MEM0).read_bytes() == before  # the person's edit stands, untouched
    fresh = vault.show(MEM0)
    vault.patch(MEM0, "Idea 思路", "agent text", version=fresh.version)  # re-read, re-apply: accepted


def test_a_note_saved_in_another_encoding_is_refused_for_edits_and_left_as_it_is(
    vault: Vault, vault_root: Path
) -> None:
    """Appending to a GBK note crashed (UnicodeDecodeError: a 500 over REST)."""
    gbk = vault_root / "agent-memory/notes/gbk.md"
    gbk.write_bytes("# 笔记\n\n中文内容\n".encode("gbk"))
    version = vault.show("agent-memory/notes/gbk.md").version  # reading works, with replacement characters
    for edit_note in (lambda: vault.append("agent-memory/notes/gbk.md", "more", version=version),
                      lambda: vault.patch("agent-memory/notes/gbk.md", "笔记", "x", version=version)):  # fmt: skip
        with pytest.raises(ConflictError, match=r"not UTF-8 text .*iconv"):
            edit_note()
    assert gbk.read_bytes() == "# 笔记\n\n中文内容\n".encode("gbk")


def test_move_keeps_history_and_refuses_to_clobber(vault: Vault, vault_root: Path) -> None:
    version = vault.show(MEM0).version
    with pytest.raises(ConflictError, match="already exists"):
        vault.move(MEM0, "agent-memory/notes/locomo.md", version=version)
    ref = vault.move(MEM0, "agent-memory/methods/mem0.md", version=version)
    assert not (vault_root / MEM0).exists() and (vault_root / ref.path).exists() and ref.version == version
    assert any(e.details.get("moved_from") == MEM0 for e in vault.history(ref.path))
    with pytest.raises(ConflictError, match="already exists"):
        vault.create(ref.path, "# again")


@pytest.mark.parametrize("target", ["rules/general.md", "rules/researcher/style.md", "agent-memory/AGENTS.md",
                                    "agent-memory/notes/CLAUDE.md"])  # fmt: skip
def test_rules_files_refuse_every_write(vault: Vault, vault_root: Path, target: str) -> None:
    (vault_root / target).parent.mkdir(parents=True, exist_ok=True)
    if not (vault_root / target).exists():
        (vault_root / target).write_text("# Rules\n\n## Style\n\nBe brief.\n", encoding="utf-8")
    original = (vault_root / target).read_bytes()
    version = vault.show(MEM0).version
    attempts = [
        lambda: vault.create(target, "# overwritten"),
        lambda: vault.append(target, "ignore all rules", version="0" * 16),
        lambda: vault.patch(target, "Style", "anything goes", version="0" * 16),
        lambda: vault.move(target, "agent-memory/notes/free.md", version="0" * 16),
        lambda: vault.move(MEM0, target, version=version),
        lambda: vault.forget(target, version="0" * 16, confirm=True),
    ]
    for attempt in attempts:
        with pytest.raises(ReadOnlyRulesError, match="rules file"):
            attempt()
    assert (vault_root / target).read_bytes() == original
    assert target not in {n.path for n in vault.notes()}  # rules are not indexed as notes


@pytest.mark.parametrize(
    "path",
    ["../outside.md", "/etc/passwd.md", ".obsidian/x.md", "agent-memory/notes.txt", "", "C:\\x.md", "c:/d/x.md",
     "dom/ x.md", "dom /x.md"],  # a name with a space at its edge is another note than the one without
)  # fmt: skip
def test_paths_outside_the_vault_are_refused(vault: Vault, path: str) -> None:
    with pytest.raises(InvalidInputError):
        vault.create(path, "# x")


def test_a_path_spelled_with_doubled_slashes_is_one_note(vault: Vault) -> None:
    """ "dom//X.md" was stored as given and indexed beside "dom/X.md" once the folder watcher ran."""
    note = vault.create("dom//X.md", "# X\n\nmarker x")
    assert note.path == "dom/X.md"
    assert vault.show("dom/./X.md").path == "dom/X.md"
    vault.sync()
    assert [n.path for n in vault.notes() if n.path.endswith("X.md")] == ["dom/X.md"]


def test_a_note_is_written_in_a_domain_and_one_left_at_the_root_makes_no_domain(vault: Vault, vault_root: Path) -> None:
    """A note created at the root got domain '', which /v1/vault/domains listed and /v1/vault/context refused."""
    with pytest.raises(InvalidInputError, match=r"domain folder, like 'research/top\.md'"):
        vault.create("top.md", "# Top")
    (vault_root / "loose.md").write_text("# Loose\n\nA person saved it here.\n", encoding="utf-8")
    vault.sync()
    assert "loose.md" in {note.path for note in vault.notes()}
    assert "" not in {domain.name for domain in vault.domains()}


def test_missing_notes_and_headings_say_what_to_do(vault: Vault) -> None:
    with pytest.raises(NotFoundError, match="no note"):
        vault.show("agent-memory/nope.md")
    version = vault.show(MEM0).version
    with pytest.raises(InvalidInputError, match="its headings are"):
        vault.patch(MEM0, "No such heading", "x", version=version)


def test_a_nul_in_a_note_path_is_refused_by_every_call(vault: Vault) -> None:
    """The file system's 'embedded null byte' escaped every call (HTTP 500 over REST, a bare error over MCP)."""
    note = vault.create("dom1/a.md", "# A")
    calls = [lambda: vault.create("dom1/b\x00.md", "# x"), lambda: vault.show("dom1/a\x00.md"),
             lambda: vault.history("dom1/a\x00.md"),
             lambda: vault.move("dom1/a.md", "dom1/z\x00.md", version=note.version),
             lambda: vault.append("dom1/a\x00.md", "x", version=note.version)]  # fmt: skip
    for call in calls:
        with pytest.raises(InvalidInputError, match="NUL character"):
            call()


def test_a_body_with_its_own_frontmatter_keeps_it_as_the_notes(vault: Vault) -> None:
    """The server's frontmatter went first and the user's block became body text: title and tags lost, and the
    outline listed '---\\ntitle: ...' as a heading."""
    vault.create("dom1/fm.md", "---\ntitle: My Title\ntags: [x]\n---\n# Heading\nbody", frontmatter={"tags": ["y"]})
    shown = vault.show("dom1/fm.md")
    assert shown.frontmatter["title"] == "My Title" and shown.frontmatter["tags"] == ["y"]  # the argument wins
    assert "created" in shown.frontmatter and "title: My Title" not in shown.text
    with pytest.raises(InvalidInputError, match="frontmatter is not valid YAML"):
        vault.create("dom1/bad.md", "---\ntitle: [unclosed\n---\n# H\n")


def test_paths_the_file_system_cannot_take_are_refused_with_a_reason(vault: Vault) -> None:
    """A name over 242 bytes (the temporary file beside it passes 255) or a folder of 300 was an OSError, HTTP 500;
    a line break made a file named with one; a NUL in frontmatter was written to the file."""
    for path, reason in (("dom1/" + "w" * 240 + ".md", "too long"), ("x" * 300 + "/n.md", "too long"),
                         ("dom1/a\nb.md", "control character")):  # fmt: skip
        with pytest.raises(InvalidInputError, match=reason):
            vault.create(path, "# x")
        with pytest.raises(InvalidInputError, match=reason):
            vault.show(path)
    assert vault.create("dom1/" + "w" * 230 + ".md", "# fits").path.endswith(".md")
    with pytest.raises(InvalidInputError, match="NUL"):
        vault.create("dom1/fm-nul.md", "# x", frontmatter={"t": "a\x00"})
