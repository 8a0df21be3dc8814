"""A note as index units: one per heading-level section (long sections in parts), with the metadata
that search filters on (vault, domain, path, layer, tags, category, concept) and the span it covers.

The unit text starts with the note title and heading path ("Title > Methods > Results"), so a
section is found by the words of its headings and a hit says where it sits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memstrata.vault.layout import domain_of, layer_of
from memstrata.vault.markdown import Note, Section, string_list


@dataclass(frozen=True)
class Unit:
    key: str  # unique within the note: section key, then "#2" for a repeated heading, "~2" for a part
    text: str
    metadata: dict[str, Any]
    span: tuple[int, int]


def note_fields(note: Note) -> dict[str, Any]:
    """The frontmatter fields search and the catalog use, in one shape whatever the note wrote."""
    front = note.frontmatter
    category = string_list(front.get("category") or front.get("categories"))
    return {
        "tags": string_list(front.get("tags")) + [t for t in string_list(front.get("tag")) if t],
        "category": category[0] if category else None,
        "concepts": string_list(front.get("concept") or front.get("concepts")),
        "source": front.get("source") if isinstance(front.get("source"), str) else None,
    }


def _parts(body: str, max_chars: int) -> list[str]:
    """Paragraph-aligned pieces of at most ``max_chars`` (a longer paragraph is cut at the limit)."""
    if len(body) <= max_chars:
        return [body]
    parts: list[str] = []
    current = ""
    for paragraph in body.split("\n\n"):
        while len(paragraph) > max_chars:
            if current:
                parts.append(current)
                current = ""
            parts.append(paragraph[:max_chars])
            paragraph = paragraph[max_chars:]
        if current and len(current) + 2 + len(paragraph) > max_chars:
            parts.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        parts.append(current)
    return parts


def _breadcrumb(title: str, section: Section) -> str:
    path = list(section.path)
    if path and path[0] == title:
        path = path[1:]
    return " > ".join([title, *path])


def note_units(note: Note, path: str, digest: str, vault: str, max_chars: int) -> list[Unit]:
    """Every unit of a note, in reading order. A heading with no text of its own (an H1 right above its
    first H2) is no unit: its words are in the breadcrumb of every section under it, and as a unit of its
    own it would outrank them on a title match while holding nothing to read. A note with no text at all
    still gets one unit (its title), so every note on disk has a trace in the index and the planner sees it."""
    fields = note_fields(note)
    base: dict[str, Any] = {
        "vault": vault,
        "domain": domain_of(path),
        "path": path,
        "title": note.title,
        "layer": layer_of(path),
        "checksum": digest,
        **fields,
    }
    if note.frontmatter_error:
        base["frontmatter_error"] = note.frontmatter_error
    units: list[Unit] = []
    seen: dict[str, int] = {}
    sections = [s for s in note.sections if s.body(note.text).strip()] or [
        note.sections[0] if note.sections else Section("", 0, (), note.body_start, note.body_start, len(note.text), 0)
    ]
    for section in sections:
        seen[section.key] = seen.get(section.key, 0) + 1
        key = section.key if seen[section.key] == 1 else f"{section.key}#{seen[section.key]}"
        body = section.body(note.text)
        pieces = _parts(body, max_chars) if body else [""]
        crumb = _breadcrumb(note.title, section)
        offset = section.body_start
        for number, piece in enumerate(pieces, start=1):
            start = note.text.find(piece, offset) if piece else section.start
            span = (section.start if number == 1 else start, start + len(piece) if piece else section.end)
            offset = span[1]
            metadata = base | {
                "heading": " > ".join(section.path),
                "level": section.level,
                "section": key if len(pieces) == 1 else f"{key}~{number}",
                "ordinal": len(units),
            }
            text = f"{crumb}\n{piece}" if piece else crumb
            units.append(Unit(str(metadata["section"]), text, metadata, span))
    if note.links:
        units[0].metadata["links"] = list(note.links)
    return units
