"""Reading notes: frontmatter, sections with spans, wikilinks; sentences in both languages; progressive
rendering and the budgeted assembly of a domain's context. Pure functions, no store."""

from __future__ import annotations

import pytest

from memstrata.errors import InvalidInputError
from memstrata.sentences import cut_to_budget, estimate_tokens, first_sentences, sentences
from memstrata.vault.context import Piece, Rung, assemble
from memstrata.vault.markdown import find_section, parse_note, render_frontmatter, split_frontmatter
from memstrata.vault.progressive import fit, render
from memstrata.vault.units import note_units

NOTE = """---
title: 记忆系统
tags: [method, 综述]
concept: vault
created: 2025-01-02
---
Intro before any heading.

# Memory systems

概述。第二句。第三句。

Methods
-------

We keep notes. Files are the truth. The index is derived.

```
# not a heading
```

### Sync

Plan is pure. Apply in batches. See [[plan|the planner]] and ![[diagram.png]].

## Results

很好。非常好！
"""


def test_frontmatter_sections_and_spans() -> None:
    note = parse_note(NOTE, "ai/memory.md")
    assert note.frontmatter == {"title": "记忆系统", "tags": ["method", "综述"], "concept": "vault",
                                "created": "2025-01-02"}  # fmt: skip
    assert note.title == "记忆系统"
    assert [(s.level, s.path) for s in note.sections] == [
        (0, ()),
        (1, ("Memory systems",)),
        (2, ("Memory systems", "Methods")),  # setext heading
        (3, ("Memory systems", "Methods", "Sync")),
        (2, ("Memory systems", "Results")),
    ]
    methods = note.sections[2]
    assert "# not a heading" in methods.body(NOTE)  # a fenced line is not a heading
    assert NOTE[methods.start : methods.end].startswith("Methods\n-------")
    assert note.links == ("plan", "diagram.png")
    assert note.sections[-1].end == len(NOTE)


def test_broken_yaml_is_reported_and_kept_as_text() -> None:
    text = "---\ntags: [unclosed\n---\n# T\nbody\n"
    front, error, start = split_frontmatter(text)
    assert front == {} and start == 0 and error and "not valid YAML" in error
    note = parse_note(text, "x.md")
    assert "tags: [unclosed" in note.text[note.sections[0].start : note.sections[0].end]


def test_title_falls_back_to_h1_then_file_name() -> None:
    assert parse_note("# Heading one\ntext", "d/file.md").title == "Heading one"
    assert parse_note("just text", "d/my-note.md").title == "my-note"


def test_frontmatter_round_trips_unicode_in_block_style() -> None:
    rendered = render_frontmatter({"tag": "method", "concept": ["检索", "rerank"]})
    assert rendered == "---\ntag: method\nconcept:\n- 检索\n- rerank\n---\n"
    assert split_frontmatter(rendered + "body")[0] == {"tag": "method", "concept": ["检索", "rerank"]}


def test_sentences_in_chinese_and_english() -> None:
    body = (
        "记忆很重要。它需要分层！对吗？ We use e.g. files. Pi is 3.14 here. Done (yes).\n- 第一项。补充。\n- item two"
    )
    assert sentences(body) == [
        ["记忆很重要。", "它需要分层！", "对吗？", "We use e.g. files.", "Pi is 3.14 here.", "Done (yes)."],
        ["- 第一项。", "补充。"],
        ["- item two"],
    ]
    assert first_sentences(body, 2) == ("记忆很重要。它需要分层！", True)
    assert first_sentences(body, None) == (body, False)
    written = "参数（召回 0.98）；M=48。Then  two   spaces.\n- 第一项。补充。"
    assert first_sentences(written, 10) == (written, False)  # as written: no space added after "；", none taken
    assert first_sentences(written, 2) == ("参数（召回 0.98）；M=48。", True)


def test_budget_cut_never_exceeds_the_budget() -> None:
    text = "第一句话。" * 50 + " and some English words to finish."
    for budget in (5, 20, 100):
        assert estimate_tokens(cut_to_budget(text, budget)) <= budget
    assert cut_to_budget("short", 10) == "short"


def test_progressive_rendering_by_depth_and_sentences() -> None:
    note = parse_note(NOTE, "ai/memory.md")
    shallow = render(note, 2, 1)
    assert "### Sync" not in shallow.text and "Methods\n-------" in shallow.text
    assert "概述。 …" in shallow.text and "第二句" not in shallow.text and shallow.truncated
    full = render(note, 6, None)
    assert "Apply in batches" in full.text and not full.truncated
    assert render(note, 0, 0).text == "# 记忆系统"
    one = render(note, 6, None, heading="Methods")
    assert one.text.startswith("Methods") and "### Sync" in one.text and "Results" not in one.text


def test_fit_steps_down_until_the_budget_holds() -> None:
    note = parse_note(NOTE, "ai/memory.md")
    whole = fit(note, None)
    for budget in (whole.tokens, whole.tokens - 1, 30, 12, 3):
        fitted = fit(note, budget)
        assert fitted.tokens <= budget
        assert fitted.truncated == (budget < whole.tokens)


def test_sections_are_named_by_heading_or_path() -> None:
    note = parse_note("# A\n## Notes\nx\n# B\n## Notes\ny\n", "n.md")
    assert find_section(note, "A > Notes").body(note.text) == "x"
    with pytest.raises(InvalidInputError, match="names 2 sections"):
        find_section(note, "Notes")
    with pytest.raises(InvalidInputError, match="no heading 'C'"):
        find_section(note, "C")


def test_units_carry_metadata_and_spans() -> None:
    units = note_units(parse_note(NOTE, "ai/memory.md"), "ai/memory.md", "f" * 64, "vault", 2000)
    assert [u.key for u in units] == ["", "Memory systems", "Memory systems > Methods",
                                      "Memory systems > Methods > Sync", "Memory systems > Results"]  # fmt: skip
    results = units[-1]
    assert results.text == "记忆系统 > Memory systems > Results\n很好。非常好！"
    assert results.metadata["domain"] == "ai" and results.metadata["tags"] == ["method", "综述"]
    assert results.metadata["concepts"] == ["vault"] and results.metadata["layer"] == "atomic"
    assert NOTE[slice(*results.span)].startswith("## Results")
    assert units[0].metadata["links"] == ["plan", "diagram.png"]


def test_long_sections_are_split_into_parts() -> None:
    body = "\n\n".join(f"Paragraph {i} " + "word " * 60 for i in range(10))
    units = note_units(parse_note(f"# Long\n{body}\n", "x.md"), "x.md", "0" * 64, "vault", 800)
    assert len(units) > 3 and all(len(u.text) <= 800 + len("Long\n") for u in units)
    assert [u.key for u in units][:2] == ["Long~1", "Long~2"]


def _piece(name: str, sizes: list[int]) -> Piece:
    detail = [(6, None), (2, 1), (0, 0)]  # whole, outline, title
    return Piece(name, "basic", tuple(Rung("x" * (4 * size), *detail[n]) for n, size in enumerate(sizes)))


def test_assembly_keeps_order_and_budget() -> None:
    pieces = [_piece("a", [100, 30, 5]), _piece("b", [80, 20, 5]), _piece("c", [50, 10, 5])]
    roomy = assemble("d", pieces, 1000)
    assert [p.tokens for p in roomy.pieces] == [100, 80, 50]
    tight = assemble("d", pieces, 120)
    assert tight.tokens <= 120 and [p.path for p in tight.pieces] == ["a", "b", "c"]
    # every piece's outline before any piece in full: "a" whole would leave b and c as bare titles
    assert [p.tokens for p in tight.pieces] == [30, 20, 50]  # then the first that fits whole
    assert [p.tokens for p in assemble("d", pieces, 180).pieces] == [100, 20, 50]
    tiny = assemble("d", pieces, 12)
    assert [p.path for p in tiny.pieces] == ["a"]  # barest pieces dropped from the end
