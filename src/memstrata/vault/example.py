"""``memstrata vault init``: the vault folder, its rules folder, and (``--example``) a small bilingual
domain in seed 000's layout (agent-memory: basic, cognition, alignment and four atomic notes) with
rules for all agents and for a ``researcher`` agent. Existing files are never overwritten."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path


def _walk(folder: Traversable, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Traversable]]:
    found: list[tuple[tuple[str, ...], Traversable]] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            found += _walk(entry, (*prefix, entry.name))
        elif entry.name.endswith(".md"):
            found.append(((*prefix, entry.name), entry))
    return found


def init_vault(root: Path, rules_dir: str, *, example: bool) -> list[str]:
    """Create the vault (and the example); returns the paths created, relative to ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    created: list[str] = []
    rules = root / rules_dir
    if not rules.exists():
        rules.mkdir(parents=True)
        created.append(f"{rules_dir}/")
    if not example:
        return created
    for parts, entry in _walk(files("memstrata.vault").joinpath("example")):
        relative = Path(rules_dir, *parts[1:]) if parts[0] == "rules" else Path(*parts)
        target = root / relative
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.read_bytes())
        created.append(relative.as_posix())
    return created
