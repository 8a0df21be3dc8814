"""Patterns compiled on first use answer as compiled ones, cost nothing until used, and every one in the package
compiles (a mistake in one would otherwise surface only when a rare text reached it)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import memstrata
from memstrata import patterns
from memstrata.patterns import compile_all, lazy_pattern

TEXT = "我下个月要搬到上海了. I moved to Berlin in 2021; I moved back in 2023."


def test_every_method_and_attribute_answers_as_the_compiled_pattern() -> None:
    source, flags = r"moved (?P<how>to|back)", re.IGNORECASE
    compiled = re.compile(source, flags)
    for method, args in [("search", (TEXT,)), ("match", (TEXT,)), ("fullmatch", ("moved to",)),
                         ("findall", (TEXT,)), ("sub", ("went", TEXT)), ("subn", ("went", TEXT)),
                         ("split", (TEXT,)), ("search", (TEXT, 30))]:  # fmt: skip
        lazy = lazy_pattern(source, flags)
        expected, got = getattr(compiled, method)(*args), getattr(lazy, method)(*args)
        if isinstance(expected, re.Match):
            assert (got.span(), got.groupdict()) == (expected.span(), expected.groupdict()), method
        else:
            assert got == expected, method
        assert getattr(lazy, method)(*args) == got or isinstance(got, re.Match)  # the second call: bound directly
    lazy = lazy_pattern(source, flags)
    assert [m.span() for m in lazy.finditer(TEXT)] == [m.span() for m in compiled.finditer(TEXT)]
    assert (lazy.pattern, lazy.flags, lazy.groups, lazy.groupindex) == (
        compiled.pattern, compiled.flags, compiled.groups, compiled.groupindex)  # fmt: skip


def test_nothing_is_compiled_until_used(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    compiled: list[str] = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda pattern, flags=0: compiled.append(pattern) or real(pattern, flags))
    lazy = lazy_pattern(r"\bunused\b")
    assert compiled == [] and lazy.pattern == r"\bunused\b"  # composing with .pattern compiles nothing
    assert lazy.search("an unused word")
    lazy.search("again")
    assert compiled == [r"\bunused\b"]


def test_every_pattern_of_the_package_compiles() -> None:
    for module_info in pkgutil.walk_packages(memstrata.__path__, "memstrata."):
        if not module_info.name.endswith("__main__"):
            importlib.import_module(module_info.name)
    compile_all()  # raises re.error naming the mistake, if one is wrong
    made = list(patterns._MADE)
    assert len(made) > 500  # the module-level rules of both paths
    assert all("_compiled" in pattern.__dict__ for pattern in made)
    assert compile_all() == 0


def test_no_module_compiles_a_pattern_at_import() -> None:
    """New rules stay on lazy_pattern: one module compiling its patterns at import costs every process's start."""
    import ast
    from pathlib import Path

    eager = []
    for path in Path(memstrata.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_functions = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.Lambda)
                        for inner in ast.walk(node) if inner is not node}  # fmt: skip
        eager += [
            f"{path.name}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and id(node) not in in_functions and ast.unparse(node.func) == "re.compile"
        ]
    assert eager == [], "use memstrata.patterns.lazy_pattern for patterns made at import"
