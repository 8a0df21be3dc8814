"""constraints.txt pins every install (`make test`, `make run`): it must cover each dependency pyproject.toml names,
at a version inside pyproject's range, or a fresh clone would resolve that package anew (or fail to install)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def locked_versions() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, version = line.partition("==")
        assert sep, f"constraints.txt: {line!r} is not an exact pin (name==version); run `make lock`"
        pins[canonicalize_name(name)] = version
    return pins


def declared_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared.extend(extra)
    return [Requirement(text) for text in declared]


def test_every_declared_dependency_is_pinned_inside_its_range() -> None:
    pins = locked_versions()
    problems = []
    for requirement in declared_requirements():
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = pins.get(canonicalize_name(requirement.name))
        if version is None:
            problems.append(f"{requirement.name} is not in constraints.txt")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{requirement.name}=={version} is outside pyproject's {requirement.specifier}")
    assert not problems, "; ".join(problems) + " (run `make lock`)"


def test_the_makefile_installs_through_the_lock() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installs = [line for line in makefile.splitlines() if "pip install" in line and "LOCK_VENV" not in line]
    assert installs, "the Makefile installs nothing"
    assert all("-c $(LOCK)" in line for line in installs), installs
