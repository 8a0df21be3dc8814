"""Progressive loading (seed 000): a note down to a heading depth, the first k sentences of each
section, and under a token budget by stepping down a ladder of detail until it fits.

Heading lines are kept as the note wrote them, so what an agent reads is still the note's Markdown;
a section that was shortened ends in " …" and the outline lists every heading, so the agent can ask
for one section in full.
"""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.sentences import cut_to_budget, estimate_tokens, first_sentences
from memstrata.vault.markdown import Note, find_section, subtree

# From richest to barest: (heading depth, sentences per section; None = all).
LADDER: tuple[tuple[int, int | None], ...] = ((6, None), (6, 5), (3, 3), (2, 2), (2, 1), (1, 1), (1, 0), (0, 0))


@dataclass(frozen=True)
class Rendered:
    text: str
    tokens: int
    depth: int
    sentences: int | None
    truncated: bool


def render(note: Note, depth: int, sentences: int | None, *, heading: str | None = None) -> Rendered:
    """The note's headings down to ``depth`` (1 = H1 only; 0 = the title alone) with the first ``sentences``
    of each kept section; ``heading`` keeps one section and those under it (depth counts from it)."""
    sections, base = note.sections, 0
    if heading is not None:
        target = find_section(note, heading)
        sections, base = subtree(note, target), max(target.level - 1, 0)
    lines: list[str] = []
    truncated = False
    for section in sections:
        level = section.level - base if section.level else 1  # text before the first heading counts as top level
        if level > depth:
            truncated = True
            continue
        if section.level > 0:
            lines.append(note.text[section.start : section.body_start].strip("\n"))
        body = section.body(note.text)
        shown, cut = first_sentences(body, sentences) if body else ("", False)
        truncated = truncated or cut
        if shown:
            lines.append(shown + (" …" if cut else ""))
    if depth == 0 or not lines:
        lines = [f"# {note.title}"]
        truncated = truncated or any(s.body(note.text) for s in sections)
    text = "\n\n".join(lines)
    return Rendered(text, estimate_tokens(text), depth, sentences, truncated)


def fit(note: Note, budget_tokens: int | None, depth: int = 6, sentences: int | None = None) -> Rendered:
    """The richest rendering no richer than (depth, sentences) that fits the budget; the barest one is cut."""
    first = render(note, depth, sentences)
    if budget_tokens is None or first.tokens <= budget_tokens:
        return first
    for level_depth, level_sentences in LADDER:
        if level_depth > depth or _more(level_sentences, sentences):
            continue
        candidate = render(note, level_depth, level_sentences)
        if candidate.tokens <= budget_tokens:
            return candidate
    barest = render(note, 0, 0)
    text = cut_to_budget(barest.text, budget_tokens)
    return Rendered(text, estimate_tokens(text), 0, 0, True)


def _more(candidate: int | None, limit: int | None) -> bool:
    """True when ``candidate`` sentences per section is more than ``limit`` allows."""
    if limit is None:
        return False
    return candidate is None or candidate > limit
