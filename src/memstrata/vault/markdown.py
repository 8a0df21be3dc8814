"""Reading a note: YAML frontmatter, heading-level sections with their character spans, wikilinks.

Headings come from a CommonMark parser (markdown-it-py), so ``#`` lines inside code fences are not
headings and setext headings (``Title`` over ``---``) are. Frontmatter follows Obsidian: a ``---``
line at the very top, YAML, a closing ``---`` line. A note whose YAML is broken is still indexed
(its frontmatter then counts as text) and the problem is reported, never dropped silently.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from memstrata.errors import InvalidInputError
from memstrata.patterns import lazy_pattern

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_FRONTMATTER = lazy_pattern(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_EMPTY_FRONTMATTER = lazy_pattern(r"\A---[ \t]*\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)")
_WIKILINK = lazy_pattern(r"!?\[\[([^\[\]|#^]+)(?:[#^][^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # here, not at import: ~35 ms of every command's start-up

    # Block rules only: headings need no inline parsing, which is most of the parser's time.
    return MarkdownIt("zero").enable(["heading", "lheading", "fence", "code", "html_block", "list", "blockquote"])


@dataclass(frozen=True)
class Section:
    """One heading and the text under it up to the next heading of any level (its direct body).

    ``start``/``end`` are character offsets into the whole file; ``body_start`` is where the text
    after the heading line begins. The part before the first heading is a section of level 0.
    """

    heading: str
    level: int
    path: tuple[str, ...]  # the headings above and including this one, outermost first
    start: int
    body_start: int
    end: int
    ordinal: int

    def body(self, text: str) -> str:
        return text[self.body_start : self.end].strip("\n")

    @property
    def key(self) -> str:
        """Stable within a note while its headings stay: how an edit finds the section it changed."""
        return " > ".join(self.path) if self.path else ""


@dataclass(frozen=True)
class Note:
    text: str
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    body_start: int
    sections: tuple[Section, ...]
    title: str
    links: tuple[str, ...] = field(default=())

    def section(self, ordinal: int) -> Section:
        return self.sections[ordinal]


def json_safe(value: Any) -> Any:
    """YAML dates and odd scalars become strings so frontmatter can live in JSON metadata."""
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def split_frontmatter(text: str) -> tuple[dict[str, Any], str | None, int]:
    """(frontmatter, error, offset where the body starts)."""
    empty = _EMPTY_FRONTMATTER.match(text)
    if empty:
        return {}, None, empty.end()
    match = _FRONTMATTER.match(text)
    if match is None:
        return {}, None, 0
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 2}" if where is not None else ""
        return {}, f"frontmatter is not valid YAML{line}: {getattr(exc, 'problem', exc)}", 0
    if loaded is None:
        return {}, None, match.end()
    if not isinstance(loaded, dict):
        return {}, "frontmatter must be a YAML mapping (key: value lines)", 0
    return json_safe(loaded), None, match.end()


def _line_offsets(text: str, start: int) -> list[int]:
    offsets = [start]
    for index in range(start, len(text)):
        if text[index] == "\n":
            offsets.append(index + 1)
    return offsets


def parse_sections(text: str, body_start: int) -> tuple[Section, ...]:
    body = text[body_start:]
    lines = _line_offsets(text, body_start)
    headings: list[tuple[int, str, int, int]] = []  # (level, text, start, body_start)
    tokens = _parser().parse(body)
    for position, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        first, last = token.map
        inline = tokens[position + 1].content.strip() if position + 1 < len(tokens) else ""
        end = lines[last] if last < len(lines) else len(text)
        headings.append((int(token.tag[1]), inline, lines[first], end))
    sections: list[Section] = []
    first_heading = headings[0][2] if headings else len(text)
    if text[body_start:first_heading].strip():
        sections.append(Section("", 0, (), body_start, body_start, first_heading, 0))
    stack: list[tuple[int, str]] = []
    for index, (level, heading, start, after) in enumerate(headings):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        end = headings[index + 1][2] if index + 1 < len(headings) else len(text)
        path = tuple(name for _, name in stack)
        sections.append(Section(heading, level, path, start, min(after, end), end, len(sections)))
    return tuple(sections)


def wikilinks(text: str) -> tuple[str, ...]:
    """Targets of ``[[note]]``, ``[[note|alias]]``, ``[[note#heading]]`` and ``![[embed]]``, in order, once each."""
    return tuple(dict.fromkeys(match.group(1).strip() for match in _WIKILINK.finditer(text)))


def parse_note(text: str, path: str) -> Note:
    frontmatter, error, body_start = split_frontmatter(text)
    sections = parse_sections(text, body_start)
    title = frontmatter.get("title")
    if not isinstance(title, str) or not title.strip():
        h1 = next((s.heading for s in sections if s.level == 1 and s.heading), None)
        title = h1 or PurePosixPath(path).stem
    return Note(text, frontmatter, error, body_start, sections, title.strip(), wikilinks(text[body_start:]))


def render_frontmatter(frontmatter: Mapping[str, Any]) -> str:
    """YAML frontmatter as Obsidian writes it: block style, keys in the given order, Unicode kept."""
    if not frontmatter:
        return ""
    dumped = yaml.safe_dump(dict(frontmatter), allow_unicode=True, sort_keys=False, default_flow_style=False)
    return f"---\n{dumped}---\n"


def string_list(value: Any) -> list[str]:
    """A frontmatter field that may be one value, a list, or a comma-separated string."""
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip().lstrip("#") for item in items if str(item).strip()]


def find_section(note: Note, heading: str) -> Section:
    """The one section named by its heading text ("Results") or heading path ("Methods > Results")."""
    wanted = " > ".join(part.strip() for part in heading.split(">")).strip()
    matches = [s for s in note.sections if s.level and (s.key == wanted or s.heading == wanted)]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(repr(s.key) for s in note.sections if s.level) or "none"
    if not matches:
        raise InvalidInputError(f"no heading {heading!r} in {note.title!r}; its headings are: {known}")
    raise InvalidInputError(
        f"{heading!r} names {len(matches)} sections of {note.title!r}; use the heading path: {known}"
    )


def subtree(note: Note, target: Section) -> tuple[Section, ...]:
    """The section and every section under it, up to the next heading of its level or higher."""
    start = target.ordinal
    end = start + 1
    while end < len(note.sections) and note.sections[end].level > target.level:
        end += 1
    return note.sections[start:end]
