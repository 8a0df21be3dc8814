"""The layering of docs/architecture.md, checked on the source: which package may import which, and no
import cycle between packages. Imports under ``if TYPE_CHECKING:`` are annotations only and not counted."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import memstrata

ROOT = Path(memstrata.__file__).resolve().parent

# Lower layers may import only what is listed (plus each other where listed); "*" is anything of ours.
BASE = {
    "types",
    "errors",
    "query",
    "config",
    "validation",
    "records",
    "indexing",
    "answers",
    "employers",
    "lexical",
    "han",
    "smalltalk",
    "modality",
    "categories",
    "file_cache",
    "patterns",
    "topics",
}
ENGINE = {"write", "read", "lifecycle", "graph", "process", "vault", "knowledge", "prompts"}
INTERFACES = {"api", "mcp_server", "cli", "service", "web", "__main__"}
MAY_NOT_IMPORT = {
    **{name: ENGINE | INTERFACES | {"storage", "providers", "facade", "memory", "export"} for name in BASE},
    "storage": ENGINE | INTERFACES | {"providers", "facade", "memory"},
    "providers": ENGINE | INTERFACES | {"storage", "facade", "memory"},
    **{name: INTERFACES | {"facade", "memory"} for name in ENGINE},
    "facade": INTERFACES | {"memory"},
    "memory": INTERFACES,
    "api": {"mcp_server", "cli", "service"},
    "mcp_server": {"cli", "service"},
}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "memstrata"


def _imports(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    annotations_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in annotations_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memstrata."):
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("memstrata."))


def _edges() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        source = _package(module)
        for target in map(_package, _imports(path)):
            if target != source:
                edges.setdefault(source, set()).add(target)
    return edges


def test_no_package_imports_one_above_it() -> None:
    edges = _edges()
    wrong = sorted(
        f"{source} -> {target}"
        for source, targets in edges.items()
        for target in targets
        if target in MAY_NOT_IMPORT.get(source, set())
    )
    assert not wrong, wrong


def test_no_import_cycle_between_packages() -> None:
    edges = _edges()
    cycles: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in list(edges):
        if node not in index:
            visit(node)
    assert not cycles, cycles


def test_start_up_leaves_the_facade_and_the_segmenter_until_they_are_used() -> None:
    """``memstrata --help``, a usage error and the document converter's child process import the package: the
    facade (~0.4 s), rjieba's dictionary (~0.1 s) and their regexes are loaded by the command that needs them."""
    code = (
        "import sys, memstrata, memstrata.cli.app, memstrata.knowledge.sandbox\n"
        "late = ('memstrata.memory', 'memstrata.read.pipeline', 'rjieba')\n"
        "print(sorted(name for name in late if name in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    code = "import memstrata\nprint(memstrata.config.__name__)\nfrom memstrata import Memory\nprint(Memory.__module__)"
    used = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert used.split() == ["memstrata.config", "memstrata.memory"]  # a submodule is reached as before, on first use
