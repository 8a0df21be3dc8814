"""The rules layer (seed 002's layer 1): project and agent rules as plain Markdown files, loaded
verbatim, in a stable order, read-only to agents, and re-read when a file changes (no restart).

Order: ``vault.rules_files`` as configured (a project's AGENTS.md, CLAUDE.md ...), then every
``<vault>/<rules_dir>/*.md`` by name (rules for all agents), then ``<rules_dir>/<agent_id>/*.md``
by name (rules for one agent). Files are re-read when their size, mtime or inode changes. A person
reviewing the rules reads every agent's (``every_agent``), each file marked with the agent it is for.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from memstrata.errors import InvalidInputError
from memstrata.sentences import estimate_tokens
from memstrata.vault.layout import checksum, resolve_file
from memstrata.vault.models import RuleFile, RulesBlock


@dataclass(frozen=True)
class _Cached:
    stamp: tuple[int, int, int]
    text: str
    digest: str


class _FileCache:
    """Text of small files, read again only when their stat stamp changes."""

    def __init__(self) -> None:
        self._files: dict[Path, _Cached] = {}
        self._lock = threading.Lock()

    def read(self, path: Path) -> _Cached:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        with self._lock:
            cached = self._files.get(path)
        if cached is not None and cached.stamp == stamp:
            return cached
        data = path.read_bytes()
        fresh = _Cached(stamp, data.decode("utf-8", errors="replace"), checksum(data))
        with self._lock:
            self._files[path] = fresh
        return fresh


_CACHE = _FileCache()


def rule_sources(
    root: Path | None, rules_dir: str, rules_files: list[str], agent_id: str | None, *, every_agent: bool = False
) -> list[tuple[Path, str]]:
    """(file, applies_to) in load order. Configured files must exist: a missing rule is an error."""
    sources: list[tuple[Path, str]] = []
    for configured in rules_files:
        path = resolve_file(root, configured)
        if not path.is_file():
            raise InvalidInputError(f"rules file {path} does not exist; fix vault.rules_files or create it")
        sources.append((path, "all"))
    if root is not None:
        folder = root / rules_dir
        if folder.is_dir():
            sources += [(p.resolve(), "all") for p in sorted(folder.glob("*.md")) if p.is_file()]
            agents = sorted(p.name for p in folder.iterdir() if p.is_dir()) if every_agent else [agent_id or ""]
            for agent in filter(None, agents):
                mine = folder / agent
                if mine.is_dir() and mine.resolve().parent == folder.resolve():
                    sources += [(p.resolve(), f"agent:{agent}") for p in sorted(mine.glob("*.md")) if p.is_file()]
    return list(dict.fromkeys(sources))


def load_rules(
    root: Path | None, rules_dir: str, rules_files: list[str], agent_id: str | None, *, every_agent: bool = False
) -> RulesBlock:
    files: list[RuleFile] = []
    for path, applies_to in rule_sources(root, rules_dir, rules_files, agent_id, every_agent=every_agent):
        cached = _CACHE.read(path)
        shown = path.relative_to(root).as_posix() if root is not None and path.is_relative_to(root) else str(path)
        files.append(RuleFile(path=shown, applies_to=applies_to, text=cached.text, checksum=cached.digest))
    text = "\n\n".join(f"<!-- rules: {rule.path} -->\n{rule.text}" for rule in files)
    return RulesBlock(files=tuple(files), text=text, tokens=estimate_tokens(text))
